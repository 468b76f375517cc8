"""Reassignment pages and actions: roles, CSRF, audit, the review page's figures, manual edits,
import and export, against a real engine."""
import json

import pytest
from django.test import Client

from console.accounts.models import AuditLogEntry
from console.reassignments.models import Reassignment
from tests.console.conftest import make_topic


@pytest.fixture
def topic(four_brokers, unique_topic):
    return make_topic(four_brokers, unique_topic(), assignments={p: [p % 3, (p + 1) % 3] for p in range(6)})


def generate(client, cluster, **fields):
    data = {"name": "fill broker 3", "scenario": "add", "topics": "", "brokers": "3", "bytes_tolerance_percent": 10,
            **fields}
    return client.post(f"/clusters/{cluster.pk}/reassignments/generate", data)


def test_viewers_cannot_generate_and_posts_need_csrf(four_brokers, topic, viewer_client, users):
    assert generate(viewer_client, four_brokers, topics=topic).status_code == 403
    csrf_client = Client(enforce_csrf_checks=True)
    csrf_client.force_login(users["operator"])
    assert generate(csrf_client, four_brokers, topics=topic).status_code == 403
    assert not Reassignment.objects.exists()


def test_generate_review_edit_export_and_audit(four_brokers, topic, operator_client):
    response = generate(operator_client, four_brokers, topics=topic)
    assert response.status_code == 302, response.content.decode()
    job = Reassignment.objects.get()
    page = operator_client.get(response["Location"]).content.decode()
    assert f'id="total-moves">{job.summary["moves"]}<' in page
    assert 'id="run-form"' in page and 'data-chart="plan-load-data"' in page
    assert 'data-broker="3"' in page
    move = job.moves.first()
    assert f'data-move="{topic}-{move.partition}"' in page

    # Manual edit: the partition now goes to the replicas typed in.
    target = [b for b in (3, 0, 1, 2) if b not in move.replicas_before][:1] + move.replicas_before[:1]
    response = operator_client.post(f"/clusters/{four_brokers.pk}/reassignments/{job.pk}/edit",
                                    {"topic": topic, "partition": move.partition, "replicas": ",".join(map(str, target))})
    assert response.status_code == 302
    move.refresh_from_db()
    assert move.replicas_after == target
    bad = operator_client.post(f"/clusters/{four_brokers.pk}/reassignments/{job.pk}/edit",
                               {"topic": topic, "partition": move.partition, "replicas": "3,3"}, follow=True)
    assert "appears twice" in bad.content.decode()

    exported = operator_client.get(f"/clusters/{four_brokers.pk}/reassignments/{job.pk}/export/proposed.json")
    entries = {(e["topic"], e["partition"]): e["replicas"] for e in json.loads(exported.content)["partitions"]}
    assert entries[(topic, move.partition)] == target
    actions = set(AuditLogEntry.objects.values_list("action", flat=True))
    assert {"reassignment.plan", "reassignment.edit"} <= actions


def test_a_noop_plan_says_so_and_offers_no_run(four_brokers, unique_topic, operator_client):
    topic = make_topic(four_brokers, unique_topic(), assignments={0: [0, 1], 1: [1, 2], 2: [2, 3], 3: [3, 0]})
    response = generate(operator_client, four_brokers, topics=topic, scenario="rebalance", brokers="")
    page = operator_client.get(response["Location"]).content.decode()
    assert 'id="noop"' in page and 'id="run-form"' not in page
    job = Reassignment.objects.get()
    run = operator_client.post(f"/clusters/{four_brokers.pk}/reassignments/{job.pk}/run",
                               {"per_broker_limit": 5, "cluster_limit": 50})
    assert run.status_code == 400 and "changes nothing" in run.content.decode()


def test_import_reads_kafkas_json_and_names_mistakes(four_brokers, topic, operator_client):
    url = f"/clusters/{four_brokers.pk}/reassignments/import"
    document = json.dumps({"version": 1, "partitions": [{"topic": topic, "partition": 0, "replicas": [3, 1]}]})
    assert operator_client.post(url, {"name": "imported", "document": document}).status_code == 302
    assert Reassignment.objects.get().moves.get().replicas_after == [3, 1]
    bad = operator_client.post(url, {"name": "bad", "document": '{"version": 1, "partitions": [{"topic": "nope", '
                                                                '"partition": 0, "replicas": [1]}]}'})
    assert bad.status_code == 400 and "Unknown topic" in bad.content.decode()


def test_bad_form_values_get_readable_errors(four_brokers, topic, operator_client):
    response = generate(operator_client, four_brokers, topics=topic, brokers="3,x")
    assert response.status_code == 400 and "Broker ids are numbers" in response.content.decode()
    response = generate(operator_client, four_brokers, topics=topic, brokers="9")
    assert response.status_code == 400 and "Unknown broker" in response.content.decode()


def test_schedules_are_created_shown_edited_and_deleted_in_the_console(four_brokers, operator_client, viewer_client):
    from console.reassignments.models import ReassignmentSchedule
    base = f"/clusters/{four_brokers.pk}/reassignments/"
    response = operator_client.post(base + "schedules/create", {"name": "nightly", "kind": "rebalance",
                                                                "cron": "0 2 * * *", "min_leader_skew_percent": 10})
    assert response.status_code == 302, response.content.decode()
    schedule = ReassignmentSchedule.objects.get()
    page = viewer_client.get(base).content.decode()
    assert f'data-schedule="{schedule.pk}"' in page and "0 2 * * *" in page and "leader skew &gt; 10.0%" in page
    assert viewer_client.post(base + f"schedules/{schedule.pk}/delete").status_code == 403
    operator_client.post(base + f"schedules/{schedule.pk}/edit", {"cron": "15 1 * * *", "min_leader_skew_percent": 5})
    schedule.refresh_from_db()
    assert (schedule.cron, schedule.enabled, schedule.min_leader_skew_percent) == ("15 1 * * *", False, 5)
    bad = operator_client.post(base + "schedules/create", {"name": "x", "kind": "elect", "cron": "nightly"})
    assert bad.status_code == 400 and "cron" in bad.content.decode()
    operator_client.post(base + f"schedules/{schedule.pk}/delete")
    assert not ReassignmentSchedule.objects.exists()
    assert AuditLogEntry.objects.filter(action__startswith="reassignment_schedule.").count() >= 3


def test_jobs_as_json(four_brokers, topic, operator_client, viewer_client):
    generate(operator_client, four_brokers, topics=topic)
    job = Reassignment.objects.get()
    listing = viewer_client.get(f"/api/clusters/{four_brokers.pk}/reassignments").json()
    assert [j["id"] for j in listing["jobs"]] == [job.pk]
    detail = viewer_client.get(f"/api/clusters/{four_brokers.pk}/reassignments/{job.pk}").json()
    assert detail["state"] == "draft" and len(detail["moves"]) == job.summary["moves"]
    assert detail["progress"]["moves_total"] == job.summary["moves"]
    assert Client().get(f"/api/clusters/{four_brokers.pk}/reassignments").status_code == 401
