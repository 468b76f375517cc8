"""The audit log page: filters by user, action, target and result, pages, and details as sentences."""
import re

import pytest
from django.urls import reverse

from console.accounts.audit_text import describe
from console.accounts.models import AuditLogEntry
from console.accounts.services import audit_log_record
from console.templatetags.units import dotted_breaks


def target_of(row: str) -> str:
    """The text of an entry's Target cell (a span cut at two lines, the whole target its title)."""
    found = re.search(r'class="target"><span class="clamp-2" title="([^"]*)">([^<]*)</span>', row)
    assert found.group(1) == found.group(2), row
    return found.group(2)


def record(users, role, action, target, details, result="ok"):
    return audit_log_record(actor=users[role], cluster=None, action=action, target=target, result=result,
                            details=details)


@pytest.mark.parametrize("action, target, details, failed, sentence", [
    ("topic.config_set", "orders retention.ms", {"key": "retention.ms", "value": "259200000", "old": "604800000"},
     False, "Set retention.ms of orders from 604800000 ms (7 d) to 259200000 ms (3 d)."),
    ("topic.config_set", "orders retention.ms", {"key": "retention.ms", "value": None, "old": "259200000"},
     False, "Remove the override of retention.ms on orders, back to its default (it was 259200000 ms (3 d))."),
    ("topic.create", "orders", {"partitions": 12, "replication_factor": 3, "configs": {"cleanup.policy": "compact"}},
     False, "Create topic orders with 12 partitions and replication factor 3, with cleanup.policy = compact."),
    ("topic.delete_records", "clicks", {"partition": None, "before_offset": None,
                                        "error": "The cluster refused deleting records of clicks-0 with "
                                                 "POLICY_VIOLATION (44): the request breaks a policy of the cluster.",
                                        "kafka_code": "POLICY_VIOLATION (44)"},
     True, "Delete every record of every partition of clicks. Refused: The cluster refused deleting records of "
           "clicks-0 with POLICY_VIOLATION (44): the request breaks a policy of the cluster."),
    ("quota.set", "user 'alice'", {"entity": [], "key": "producer_byte_rate", "value": 1048576, "old": None},
     False, "Set the producer_byte_rate quota of user 'alice' to 1,048,576 (it was not set)."),
    ("broker.config_set", "broker 1 log.retention.ms", {"key": "log.retention.ms", "value": "86400000",
                                                         "old": None, "scope": "broker"},
     False, "Set log.retention.ms of broker 1 from the default to 86400000 ms (1 d)."),
    ("some.new_action", "x", {"before_offset": None, "copies": 3}, False, "Before offset: none. Copies: 3."),
])
def test_details_read_as_sentences_never_python_reprs(action, target, details, failed, sentence):
    text = describe(action=action, target=target, details=details, failed=failed)
    assert text == sentence
    assert "None" not in text and "{" not in text and "[" not in text


def test_the_page_filters_by_user_action_target_and_result_and_pages(users, console_admin_client, settings):
    record(users, "operator", "topic.delete", "orders", {})
    record(users, "admin", "topic.delete", "payments", {})
    record(users, "operator", "group.delete", "orders-readers", {})
    record(users, "operator", "topic.create", "orders-archive", {"partitions": 1, "replication_factor": 1,
                                                                  "configs": {}}, result="failed")
    url = reverse("audit_log")

    def targets(**query):
        page = console_admin_client.get(url, query).content.decode()
        return [target_of(row) for row in page.split('data-entry="')[1:]]

    assert targets() == ["orders-archive", "orders-readers", "payments", "orders"]        # newest first
    assert targets(actor="admin") == ["payments"]
    assert targets(action="topic.delete") == ["payments", "orders"]
    assert targets(action="topic") == ["orders-archive", "payments", "orders"]           # an entity: all its actions
    assert targets(target="ORDERS") == ["orders-archive", "orders-readers", "orders"]
    assert targets(result="failed", actor="operator") == ["orders-archive"]
    page = console_admin_client.get(url).content.decode()
    assert '<option value="group.delete">' in page and '<option value="admin">' in page
    assert "Delete topic orders." in page and "old: None" not in page

    for i in range(55):
        record(users, "operator", "topic.delete", f"bulk-{i:02}", {})
    first = console_admin_client.get(url, {"target": "bulk"}).content.decode()
    assert first.count('data-entry="') == 50 and "page 1 of 2" in first
    assert 'href="?target=bulk&amp;page=2"' in first                          # the filter stays on the next page
    second = console_admin_client.get(url, {"target": "bulk", "page": 2}).content.decode()
    assert second.count('data-entry="') == 5 and "bulk-00" in second and "orders" not in second.split("<table")[1]
    data = console_admin_client.get("/api/audit", {"action": "topic.create"}).json()
    assert data["count"] == 1 and data["entries"][0]["sentence"].startswith("Create topic orders-archive")
    assert data["entries"][0]["details"]["partitions"] == 1                 # scripts keep the raw details
    assert AuditLogEntry.objects.count() == 59


@pytest.mark.parametrize("action, target, details, sentence", [
    ("reassignment.plan", "empty broker 2", {"scenario": "decommission", "topics": [], "brokers": [2],
                                             "replication_factor": None, "job": 1},
     "Plan empty broker 2: decommission of every topic, brokers 2 (job 1)."),
    ("reassignment.run", "empty broker 2", {"throttle_bytes_per_sec": 52428800, "per_broker_limit": 5,
                                            "cluster_limit": 50, "elect_preferred": True, "run_at": None},
     "Run plan empty broker 2 throttled at 50 MiB/s, at most 5 moves per broker and 50 in the cluster."),
    ("schema.register", "orders-value (7)", {}, "Register schema orders-value (7)."),
    ("acl.create", "4 ACLs of User:app", {"source": "wizard", "count": 4, "refused": [],
                                          "acls": [f"ALLOW User:app {op} on TOPIC orders (LITERAL) from *"
                                                   for op in ("READ", "DESCRIBE", "WRITE", "CREATE")]},
     "Create 4 ACLs (wizard): ALLOW User:app READ on TOPIC orders (LITERAL) from *; ALLOW User:app DESCRIBE on "
     "TOPIC orders (LITERAL) from *; ALLOW User:app WRITE on TOPIC orders (LITERAL) from * and 1 more."),
    ("acl.delete", "ALLOW User:app READ on GROUP g (LITERAL) from *",
     {"count": 1, "acls": ["ALLOW User:app READ on GROUP g (LITERAL) from *"], "removed": 1},
     "Delete 1 ACL: ALLOW User:app READ on GROUP g (LITERAL) from *. The cluster removed 1."),
    ("scram.upsert", "alice", {"mechanisms": ["SCRAM-SHA-256", "SCRAM-SHA-512"], "iterations": 8192},
     "Set the SCRAM credentials of user alice (SCRAM-SHA-256, SCRAM-SHA-512, 8,192 iterations)."),
    ("scram.remove", "alice", {"mechanisms": ["SCRAM-SHA-512"]},
     "Remove the SCRAM credentials of user alice (SCRAM-SHA-512)."),
])
def test_more_actions_have_sentences_of_their_own(action, target, details, sentence):
    assert describe(action=action, target=target, details=details) == sentence


def test_a_local_schema_entry_names_its_registry_in_the_cluster_column(db, users, console_admin_client):
    """The console's own schema store belongs to no cluster: the Cluster column says "—" and
    names the store; a cluster's registry's action shows its cluster."""
    from console.clusters.models import Cluster
    from console.messages import services as message_services
    message_services.schema_register(actor=users["operator"], schema_id=9, subject="orders-value",
                                     schema='{"type": "string"}')
    cluster = Cluster.objects.create(name="prod", bootstrap_servers="127.0.0.1:1")
    audit_log_record(actor=users["operator"], cluster=cluster, action="schema.delete_subject",
                     target="payments-value", result="ok", details={})
    page = console_admin_client.get(reverse("audit_log")).content.decode()
    rows = {target_of(row): row for row in page.split('data-entry="')[1:]}
    local = rows["orders-value (9)"].split("data-cluster>")[1].split("</td>")[0]
    assert local == "— <small>Local schemas</small>"
    assert "Register schema orders-value (9) in Local schemas." in rows["orders-value (9)"]
    assert rows["payments-value"].split("data-cluster>")[1].split("</td>")[0] == "prod"


def test_an_action_may_wrap_after_its_dots_and_stays_escaped(users, console_admin_client):
    record(users, "admin", "topic.elect_preferred_leaders", "orders", {})
    page = console_admin_client.get(reverse("audit_log")).content.decode()
    assert 'class="action"><code>topic.<wbr>elect_preferred_leaders</code></td>' in page
    assert dotted_breaks("a.<b>") == "a.<wbr>&lt;b&gt;"
