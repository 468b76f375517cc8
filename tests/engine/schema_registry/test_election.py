"""Two registry instances: one primary, writes forwarded to it, and after a kill -9 of the
primary the other takes over with every schema kept and no id given twice."""
from __future__ import annotations

import json

import pytest

from tests.support.registry_process import RegistryProcess, call
from tests.support.waiting import wait_until

GROUP_ARGS = ["--session-timeout-ms", "2000", "--primary-wait-ms", "3000"]


def record(name: str) -> dict:
    return {"schema": json.dumps({"type": "record", "name": name, "fields": [{"name": "a", "type": "int"}]})}


@pytest.fixture
def pair(registry_engine, tmp_path, request):
    group = ["--group-id", f"sr-{request.node.name}", "--topic", f"_schemas_{request.node.name}"[:200]]
    first = RegistryProcess(registry_engine.bootstrap, tmp_path, GROUP_ARGS + group, name="first").start()
    second = RegistryProcess(registry_engine.bootstrap, tmp_path, GROUP_ARGS + group, name="second").start()
    yield first, second
    for process in (first, second):
        process.kill()


def primary_and_secondary(first: RegistryProcess, second: RegistryProcess):
    # Both agree on one primary: Confluent's rule, the eligible member with the smallest URL.
    expected = min((first, second), key=lambda p: p.url)
    wait_until(lambda: expected.is_primary() and "Primary: " + expected.url in second.log_text()
               and "Primary: " + expected.url in first.log_text(), timeout=60, message="an agreed primary")
    return expected, (second if expected is first else first)


def test_writes_on_the_secondary_are_forwarded_to_the_primary(pair):
    primary, secondary = primary_and_secondary(*pair)
    status, body, _ = call(f"{secondary.url}/subjects/forwarded/versions", "POST", record("Forwarded"))
    assert status == 200, body
    schema_id = body["id"]
    # The secondary answers only once it has read the write back: its own reads see it at once.
    assert call(f"{secondary.url}/subjects/forwarded/versions/latest")[1]["id"] == schema_id
    assert call(f"{primary.url}/subjects/forwarded/versions/latest")[1]["id"] == schema_id
    assert call(f"{secondary.url}/config/forwarded", "PUT", {"compatibility": "FULL"})[1] == {"compatibility": "FULL"}
    assert call(f"{primary.url}/config/forwarded")[1] == {"compatibilityLevel": "FULL"}
    # A refusal comes back from the primary as it is.
    status, refused, _ = call(f"{secondary.url}/subjects/forwarded/versions", "POST",
                              {"schema": '{"type":"record","name":"Forwarded","fields":[{"name":"a","type":"string"}]}'})
    assert (status, refused["error_code"]) == (409, 409)


def test_kill_9_of_the_primary_the_other_takes_over_no_schema_lost_no_id_reused(pair):
    primary, secondary = primary_and_secondary(*pair)
    ids = {}
    for i in range(6):
        target = primary if i % 2 else secondary
        status, body, _ = call(f"{target.url}/subjects/before-{i}/versions", "POST", record(f"Before{i}"))
        assert status == 200, body
        ids[f"before-{i}"] = body["id"]
    primary.kill()          # SIGKILL: no leave-group, the coordinator notices after the session timeout
    wait_until(secondary.is_primary, timeout=60, message="the secondary to become primary")
    for subject, schema_id in ids.items():
        assert call(f"{secondary.url}/subjects/{subject}/versions/1")[1]["id"] == schema_id
    status, body, _ = call(f"{secondary.url}/subjects/after/versions", "POST", record("After"))
    assert status == 200, body
    assert body["id"] not in ids.values() and body["id"] == max(ids.values()) + 1
    # The old schemas keep their ids when registered again under a new subject.
    assert call(f"{secondary.url}/subjects/again/versions", "POST", record("Before0"))[1]["id"] == ids["before-0"]


def test_an_instance_that_may_not_be_primary_forwards_everything(registry_engine, tmp_path):
    group = ["--group-id", "sr-eligibility", "--topic", "_schemas_eligibility"]
    follower = RegistryProcess(registry_engine.bootstrap, tmp_path, GROUP_ARGS + group + ["--no-primary"],
                               name="follower").start()
    try:
        status, body, _ = call(f"{follower.url}/subjects/x/versions", "POST", record("X"), timeout=60)
        assert (status, body["error_code"]) == (500, 50004)      # no eligible primary: Confluent's unknown leader
        leader = RegistryProcess(registry_engine.bootstrap, tmp_path, GROUP_ARGS + group, name="leader").start()
        try:
            wait_until(leader.is_primary, timeout=60, message="the eligible instance to lead")
            status, body, _ = call(f"{follower.url}/subjects/x/versions", "POST", record("X"))
            assert status == 200 and body["id"] == 1
        finally:
            leader.kill()
    finally:
        follower.kill()
