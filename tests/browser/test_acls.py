"""The ACLs and Users pages in a real browser, against the session's ACL engine (SASL, the
authorizer on): an admin filters and sorts, adds a consumer's ACLs with the wizard, imports a
CSV file through its preview, deletes an ACL after the browser's confirmation, and manages a
SCRAM user; a second cluster row logged in as a restricted principal answers every page,
saying "not authorized" where Kafka refused."""
from __future__ import annotations

import re
import subprocess
import sys
import uuid

import pytest
from kafka import KafkaProducer
from kafka.admin import NewTopic
from playwright.sync_api import expect

from tests.browser.conftest import ROOT, Console, start_daphne
from tests.support.console_process import stop_daphne
from tests.support.acls import USERS, grant, kafka_python_login, revoke_all
from tests.support.sasl import ADMIN, ADMIN_PASSWORD

SECRETS = {"CONSOLE_SECRET_BROWSER_ACL_ADMIN": ADMIN_PASSWORD, "CONSOLE_SECRET_BROWSER_BOB": USERS["bob"]}
PRINCIPAL = f"User:browser-{uuid.uuid4().hex[:6]}"
PREFIX = f"seen-{uuid.uuid4().hex[:6]}"


def _cluster_add(env: dict, *args: str) -> int:
    done = subprocess.run([sys.executable, "manage.py", "cluster_add", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return int(re.search(r"\(id (\d+)\)", done.stdout).group(1))


@pytest.fixture(scope="module")
def acl_console(console_server, acl_engine, acl_admin):
    """A console process (same database) that holds the two clusters' SASL passwords, with rows
    for the ACL engine as its super user and as bob, who may describe PREFIX-* topics only."""
    env = {**console_server.env, **SECRETS}
    ids = {"admin": _cluster_add(env, f"acls-{uuid.uuid4().hex[:4]}", acl_engine.bootstrap, "--security-protocol",
                                 "SASL_PLAINTEXT", "--sasl-mechanism", "PLAIN", "--sasl-username", ADMIN,
                                 "--sasl-password-env", "CONSOLE_SECRET_BROWSER_ACL_ADMIN"),
           "bob": _cluster_add(env, f"restricted-{uuid.uuid4().hex[:4]}", acl_engine.bootstrap,
                               "--security-protocol", "SASL_PLAINTEXT", "--sasl-mechanism", "SCRAM-SHA-256",
                               "--sasl-username", "bob", "--sasl-password-env", "CONSOLE_SECRET_BROWSER_BOB")}
    acl_admin.create_topics([NewTopic(f"{PREFIX}-orders", 2, 2), NewTopic(f"hidden-{PREFIX}", 1, 2)])
    producer = KafkaProducer(bootstrap_servers=acl_engine.bootstrap, **kafka_python_login(ADMIN))
    producer.send(f"{PREFIX}-orders", b"bob may not read this", partition=0).get(timeout=30)
    producer.close()
    grant(acl_admin, "User:bob", "DESCRIBE", "TOPIC", PREFIX, pattern="PREFIXED")
    log_path = console_server.log_path.with_name("daphne-acls.log")
    daphne, url = start_daphne(env, log_path)
    try:
        yield Console(url=url, engine=acl_engine, log_path=log_path, env=env), ids
    finally:
        stop_daphne(daphne)
        # The other tests find one cluster again (a login lands on its overview).
        subprocess.run([sys.executable, "manage.py", "shell", "-c", "from console.clusters.models import Cluster; "
                        f"Cluster.objects.filter(pk__in={sorted(ids.values())}).delete()"],
                       cwd=ROOT, env=env, check=True, capture_output=True)
        revoke_all(acl_admin, "User:bob")
        revoke_all(acl_admin, PRINCIPAL)


def test_admin_filters_sorts_uses_the_wizard_imports_csv_and_deletes(login, acl_console, acl_admin, shoot, tmp_path):
    console, ids = acl_console
    for i in range(12):
        grant(acl_admin, PRINCIPAL, "READ", "TOPIC", f"t{i:02d}")
    admin = login("admin", console)
    admin.on("dialog", lambda dialog: dialog.accept())
    base = f"/clusters/{ids['admin']}/acls/"
    admin.goto(base)
    admin.fill("#acl-filters input[name=principal]", PRINCIPAL)
    admin.locator("#acl-filters button[type=submit]").click()
    expect(admin.locator("#acl-counts")).to_contain_text("12 of")
    admin.locator('#acls th a[data-sort-key="resource_name"]').click()          # ascending
    admin.locator('#acls th a[data-sort-key="resource_name"]').click()          # then descending
    expect(admin.locator("#acls tbody tr").first).to_contain_text("t11")
    shoot(admin, "acls")

    admin.locator('[data-admin-action="wizard-consumer"]').click()
    admin.fill("#id_principal", PRINCIPAL)
    admin.fill("#id_topic", "payments")
    admin.fill("#id_group", "payments-readers")
    expect(admin.locator("#id_application_id")).to_be_hidden()                   # the wizard's script
    admin.locator('[data-admin-action="preview-wizard"]').click()
    expect(admin.locator("#new-count")).to_contain_text("3 ACLs will be created")
    shoot(admin, "acls-wizard-preview")
    admin.locator('[data-admin-action="apply-acls"]').click()
    expect(admin.locator(".messages")).to_contain_text("3 ACLs created")

    csv_file = tmp_path / "acls.csv"
    csv_file.write_text("Principal,ResourceType,PatternType,ResourceName,Operation,PermissionType,Host\n"
                        f"{PRINCIPAL},TOPIC,LITERAL,payments,READ,ALLOW,*\n"
                        f"{PRINCIPAL},TRANSACTIONAL_ID,PREFIXED,pay-,WRITE,ALLOW,*\n"
                        f"{PRINCIPAL},TOPIC,LITERAL,x,NOPE,ALLOW,*\n")
    admin.goto(base + "import")
    admin.set_input_files("#id_csv_file", str(csv_file))
    admin.locator('[data-admin-action="preview-import"]').click()
    expect(admin.locator("#new-count")).to_contain_text("1 ACL will be created")
    expect(admin.locator("#existing-acls tbody tr")).to_have_count(1)
    expect(admin.locator("#import-errors")).to_contain_text("line 4")
    shoot(admin, "acls-import-preview")
    admin.locator('[data-admin-action="apply-acls"]').click()
    expect(admin.locator(".messages")).to_contain_text("1 ACL created")

    admin.goto(base + f"?principal={PRINCIPAL}&name=t00")
    admin.locator('#acls [data-admin-action="delete-acl"]').click()
    expect(admin.locator(".messages")).to_contain_text("1 ACL deleted")
    admin.goto(base + f"?principal={PRINCIPAL}")
    expect(admin.locator("#acl-counts")).to_contain_text("15 of")                # 12 - 1 + 3 + 1

    admin.goto(f"/clusters/{ids['admin']}/acls/principal?principal={PRINCIPAL}&host=*")
    expect(admin.locator("#caveats")).to_contain_text("super.users")
    shoot(admin, "acls-principal")


def test_admin_adds_rotates_and_removes_a_scram_user(login, acl_console, shoot):
    console, ids = acl_console
    user, password = f"svc-{uuid.uuid4().hex[:6]}", f"pw-{uuid.uuid4().hex}"
    admin = login("admin", console)
    admin.on("dialog", lambda dialog: dialog.accept())
    admin.goto(f"/clusters/{ids['admin']}/users/")
    admin.fill("#id_user", user)
    admin.fill("#id_password", password)
    admin.locator('[data-admin-action="save-user"]').click()
    expect(admin.locator(".messages")).to_contain_text(f"SCRAM credentials of {user} saved")
    row = admin.locator(f'#users tr[data-user="{user}"]')
    expect(row).to_contain_text("SCRAM-SHA-256, SCRAM-SHA-512")
    assert password not in admin.content() and admin.input_value("#id_password") == ""
    shoot(admin, "users")
    row.locator('[data-admin-action="remove-user"]').click()
    expect(admin.locator(".messages")).to_contain_text(f"credentials of {user} removed")
    expect(admin.locator(f'#users tr[data-user="{user}"]')).to_have_count(0)


def test_a_restricted_principal_still_gets_every_page(login, acl_console, shoot):
    console, ids = acl_console
    viewer = login("viewer", console)
    base = f"/clusters/{ids['bob']}/"
    for path in ("", "brokers/", "topics/", f"topics/{PREFIX}-orders/", "groups/", "transactions/", "quotas/",
                 "acls/", "users/", f"topics/{PREFIX}-orders/messages/", f"topics/{PREFIX}-orders/configs"):
        response = viewer.goto(base + path)
        assert response.status in (200, 403), (path, response.status)
        expect(viewer.locator("h1")).not_to_contain_text("Server error")
    viewer.goto(base + "topics/")
    expect(viewer.locator(f'tr[data-topic="{PREFIX}-orders"]')).to_have_count(1)
    expect(viewer.locator(f'tr[data-topic="hidden-{PREFIX}"]')).to_have_count(0)
    viewer.goto(base + f"topics/{PREFIX}-orders/")
    expect(viewer.locator('[data-partition="0"]').first).to_be_visible()
    viewer.goto(base + f"topics/{PREFIX}-orders/configs")
    expect(viewer.locator("main")).to_contain_text(re.compile("not authorized", re.IGNORECASE))
    expect(viewer.locator("main")).to_contain_text("TOPIC_AUTHORIZATION_FAILED (29)")
    shoot(viewer, "restricted-topic-configs")
    viewer.goto(base + "brokers/0/")
    expect(viewer.locator("main")).to_contain_text("Configs: not authorized")
    shoot(viewer, "restricted-broker")
    viewer.goto(base + "acls/")
    expect(viewer.locator("#acl-error")).to_contain_text("Not authorized")
    shoot(viewer, "restricted-acls")
    viewer.goto(base + f"topics/{PREFIX}-orders/messages/")
    expect(viewer.locator("#not-authorized")).to_be_visible()
