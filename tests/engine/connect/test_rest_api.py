"""Kafka Connect's REST API on two distributed workers, driven by a plain HTTP client: paths,
status codes, JSON shapes and messages as Connect's, and changes sent to either worker (the
follower forwards them to the leader)."""
from __future__ import annotations

import socket

import pytest
from kafka import KafkaAdminClient

from engine.connect.rest import IDLE_TIMEOUT_S
from tests.support.connect_worker import request, running, status_of
from tests.support.groups import create_topic
from tests.support.waiting import wait_until


@pytest.fixture
def source(connect_cluster, tmp_path, request_name):
    """A running FileStreamSource reading a 3-line file into its own topic."""
    topic = f"{request_name}-topic"
    create_topic(_bootstrap(connect_cluster), topic, 1)
    path = tmp_path / "in.txt"
    path.write_text("a\nb\nc\n")
    config = {"connector.class": "FileStreamSource", "file": str(path), "topic": topic}
    code, body, _ = request(connect_cluster[1], "POST", "/connectors", {"name": request_name, "config": config})
    assert code == 201, body
    wait_until(lambda: running(connect_cluster[0], request_name), 90, message="source running")
    yield request_name, topic, path
    request(connect_cluster[0], "DELETE", f"/connectors/{request_name}")


@pytest.fixture
def request_name(request):
    return request.node.name.replace("_", "-")[:60]


def _bootstrap(workers) -> str:
    for line in workers[0].properties.read_text().splitlines():
        if line.startswith("bootstrap.servers="):
            return line.split("=", 1)[1]
    raise AssertionError("no bootstrap.servers")


def test_root_names_the_version_and_the_kafka_cluster(connect_cluster, connect_engine):
    code, body, _ = request(connect_cluster[0], "GET", "/")
    admin = KafkaAdminClient(bootstrap_servers=connect_engine.bootstrap)
    try:
        cluster_id = admin.describe_cluster()["cluster_id"]
    finally:
        admin.close()
    assert code == 200
    assert set(body) == {"version", "commit", "kafka_cluster_id"}
    assert body["kafka_cluster_id"] == cluster_id


def test_create_through_either_worker_then_read_update_patch_and_delete(connect_cluster, tmp_path, connect_engine):
    create_topic(connect_engine.bootstrap, "crud-topic", 1)
    config = {"connector.class": "FileStreamSink", "file": str(tmp_path / "out.txt"), "topics": "crud-topic"}
    for worker in connect_cluster:      # one of them is not the leader: it forwards
        name = f"crud-{worker.port}"
        code, body, headers = request(worker, "POST", "/connectors", {"name": name, "config": config})
        assert code == 201, body
        assert headers["Location"] == f"/connectors/{name}"
        assert body == {"name": name, "config": {**config, "name": name}, "tasks": [], "type": "sink"}
    name = f"crud-{connect_cluster[0].port}"
    assert request(connect_cluster[0], "POST", "/connectors", {"name": name, "config": config})[:2] == \
        (409, {"error_code": 409, "message": f"Connector {name} already exists"})

    status = wait_until(lambda: running(connect_cluster[1], name), 90, message="sink running")
    assert status["name"] == name and status["type"] == "sink"
    assert {w["worker_id"] for w in [status["connector"], *status["tasks"]]} <= \
        {f"127.0.0.1:{w.port}" for w in connect_cluster}
    listed = request(connect_cluster[0], "GET", "/connectors")[1]
    assert {f"crud-{w.port}" for w in connect_cluster} <= set(listed)
    expanded = request(connect_cluster[1], "GET", "/connectors?expand=status&expand=info")[1]
    assert set(expanded[name]) == {"status", "info"}
    assert expanded[name]["info"]["tasks"] == [{"connector": name, "task": 0}]
    assert request(connect_cluster[0], "GET", f"/connectors/{name}/tasks/0/status")[1] == status["tasks"][0]
    tasks = request(connect_cluster[0], "GET", f"/connectors/{name}/tasks")[1]
    assert [t["id"] for t in tasks] == [{"connector": name, "task": 0}]
    assert tasks[0]["config"]["topics"] == "crud-topic"

    code, body, _ = request(connect_cluster[1], "PUT", f"/connectors/{name}/config", {**config, "tasks.max": "2"})
    assert code == 200 and body["config"]["tasks.max"] == "2"
    wait_until(lambda: running(connect_cluster[0], name, tasks=2), 90, message="two tasks")
    code, body, _ = request(connect_cluster[1], "PATCH", f"/connectors/{name}/config", {"tasks.max": None})
    assert code == 200 and "tasks.max" not in body["config"]
    assert request(connect_cluster[0], "GET", f"/connectors/{name}/config")[1] == {**config, "name": name}
    wait_until(lambda: running(connect_cluster[0], name, tasks=1), 90, message="back to one task")

    code, body, headers = request(connect_cluster[1], "PUT", "/connectors/crud-put/config", config)
    assert code == 201 and headers["Location"] == "/connectors/crud-put"
    for created in (name, f"crud-{connect_cluster[1].port}", "crud-put"):
        assert request(connect_cluster[1], "DELETE", f"/connectors/{created}")[0] == 204
    assert request(connect_cluster[0], "GET", f"/connectors/{name}")[:2] == \
        (404, {"error_code": 404, "message": f"Connector {name} not found"})
    wait_until(lambda: status_of(connect_cluster[0], name) is None, 90, message="status gone")


def test_pause_resume_and_stop_change_connector_and_task_states(connect_cluster, source):
    name, _, _ = source
    assert request(connect_cluster[1], "PUT", f"/connectors/{name}/pause")[0] == 202
    wait_until(lambda: _states(connect_cluster[0], name) == ("PAUSED", ["PAUSED"]), 90, message="paused")
    assert request(connect_cluster[0], "PUT", f"/connectors/{name}/resume")[0] == 202
    wait_until(lambda: _states(connect_cluster[1], name) == ("RUNNING", ["RUNNING"]), 90, message="resumed")
    assert request(connect_cluster[1], "PUT", f"/connectors/{name}/stop")[0] == 204
    wait_until(lambda: _states(connect_cluster[0], name) == ("STOPPED", []), 90, message="stopped")
    assert request(connect_cluster[0], "GET", f"/connectors/{name}")[1]["tasks"] == []
    assert request(connect_cluster[0], "PUT", "/connectors/nobody/pause")[:2] == \
        (404, {"error_code": 404, "message": "Unknown connector nobody"})


def _states(worker, name):
    status = status_of(worker, name)
    return (status["connector"]["state"], [t["state"] for t in status["tasks"]]) if status else None


def test_source_offsets_are_read_altered_and_reset_only_when_stopped(connect_cluster, source):
    name, _, path = source
    expected = [{"partition": {"filename": str(path)}, "offset": {"position": 6}}]
    wait_until(lambda: request(connect_cluster[0], "GET", f"/connectors/{name}/offsets")[1] == {"offsets": expected},
               30, message="offsets committed")
    code, body, _ = request(connect_cluster[1], "PATCH", f"/connectors/{name}/offsets", {"offsets": expected})
    assert code == 400
    assert body["message"].startswith("Connectors must be in the STOPPED state before their offsets can be modified")
    assert request(connect_cluster[0], "PUT", f"/connectors/{name}/stop")[0] == 204
    wait_until(lambda: _states(connect_cluster[0], name) == ("STOPPED", []), 90, message="stopped")
    altered = [{"partition": {"filename": str(path)}, "offset": {"position": 2}}]
    assert request(connect_cluster[1], "PATCH", f"/connectors/{name}/offsets", {"offsets": altered})[:2] == \
        (200, {"message": "The offsets for this connector have been altered successfully"})
    assert request(connect_cluster[0], "GET", f"/connectors/{name}/offsets")[1] == {"offsets": altered}
    assert request(connect_cluster[0], "DELETE", f"/connectors/{name}/offsets")[:2] == \
        (200, {"message": "The offsets for this connector have been reset successfully"})
    assert request(connect_cluster[1], "GET", f"/connectors/{name}/offsets")[1] == {"offsets": []}
    bad = [{"partition": {"filename": str(path)}, "offset": {"position": -1}}]
    code, body, _ = request(connect_cluster[0], "PATCH", f"/connectors/{name}/offsets", {"offsets": bad})
    assert (code, body["message"]) == (400, "The value for the 'position' key in the offset should be a "
                                            "non-negative value")


def test_sink_offsets_are_the_consumer_groups(connect_cluster, connect_engine, tmp_path):
    create_topic(connect_engine.bootstrap, "sink-offsets", 1)
    name = "sink-offsets-reader"
    config = {"connector.class": "FileStreamSink", "file": str(tmp_path / "o.txt"), "topics": "sink-offsets",
              "value.converter": "org.apache.kafka.connect.storage.StringConverter"}
    from tests.support.groups import produce
    produce(connect_engine.bootstrap, "sink-offsets", [(None, b"x"), (None, b"y")], partition=0)
    assert request(connect_cluster[0], "POST", "/connectors", {"name": name, "config": config})[0] == 201
    expected = {"offsets": [{"partition": {"kafka_topic": "sink-offsets", "kafka_partition": 0},
                             "offset": {"kafka_offset": 2}}]}
    wait_until(lambda: request(connect_cluster[1], "GET", f"/connectors/{name}/offsets")[1] == expected, 60,
               message="the sink's committed offsets")
    assert (tmp_path / "o.txt").read_text() == "x\ny\n"
    assert request(connect_cluster[0], "GET", f"/connectors/{name}/topics")[1] == {name: {"topics": ["sink-offsets"]}}
    assert request(connect_cluster[0], "PUT", f"/connectors/{name}/topics/reset")[0] == 202
    assert request(connect_cluster[0], "GET", f"/connectors/{name}/topics")[1] == {name: {"topics": []}}
    request(connect_cluster[0], "DELETE", f"/connectors/{name}")


def _outside_a_rebalance(worker, method: str, path: str):
    """Connect answers 409 while its group rebalances (another test's connector may just have
    gone), and its clients ask again: the first answer that is not a 409."""
    def ask():
        answer = request(worker, method, path)
        return answer if answer[0] != 409 else None
    return wait_until(ask, 90, message=f"{method} {path} outside a rebalance")


def test_restart_answers_204_alone_and_202_with_the_plan(connect_cluster, source):
    name, _, _ = source
    assert _outside_a_rebalance(connect_cluster[1], "POST", f"/connectors/{name}/restart")[0] == 204
    code, body, _ = _outside_a_rebalance(connect_cluster[1], "POST",
                                         f"/connectors/{name}/restart?includeTasks=true&onlyFailed=false")
    assert code == 202
    assert body["connector"]["state"] == "RESTARTING" and [t["state"] for t in body["tasks"]] == ["RESTARTING"]
    # The leader answers the restart from its own view of the status topic: wait until every
    # worker's view (the leader's among them) has read RUNNING, not only the one asked.
    wait_until(lambda: all(running(worker, name) for worker in connect_cluster), 90,
               message="running after the restart, as every worker sees it")
    code, body, _ = _outside_a_rebalance(connect_cluster[0], "POST",
                                         f"/connectors/{name}/restart?includeTasks=true&onlyFailed=true")
    assert code == 202
    assert all(t["state"] != "RESTARTING" for t in body["tasks"])      # nothing had failed
    wait_until(lambda: running(connect_cluster[0], name), 90, message="running again")
    assert _outside_a_rebalance(connect_cluster[0], "POST", f"/connectors/{name}/tasks/0/restart")[0] == 204
    assert request(connect_cluster[1], "POST", f"/connectors/{name}/tasks/7/restart")[:2] == \
        (404, {"error_code": 404, "message": f"Unknown task: {name}-7"})


def test_bad_requests_get_connects_errors(connect_cluster):
    worker = connect_cluster[0]
    assert request(worker, "GET", "/connectors/missing/status")[:2] == \
        (404, {"error_code": 404, "message": "No status found for connector missing"})
    code, body, _ = request(worker, "POST", "/connectors", raw=b"{not json")
    assert code == 400 and body["message"].startswith("Request body is not valid JSON")
    assert request(worker, "DELETE", "/connectors")[:2] == (405, {"error_code": 405,
                                                                   "message": "HTTP 405 Method Not Allowed"})
    assert request(worker, "GET", "/no/such/path")[:2] == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    code, body, _ = request(worker, "PUT", "/connectors/one/config", {"connector.class": "FileStreamSink",
                                                                     "name": "two", "topics": "t"})
    assert (code, body["message"]) == (400, "Connector name configuration (two) doesn't match connector name in "
                                            "the URL (one)")
    code, body, _ = request(worker, "POST", "/connectors", {"name": "x", "config": {"connector.class": "FileStreamSink",
                                                                                   "topics": "t"},
                                                           "initial_state": "SLEEPING"})
    assert code == 400 and "initial_state" in body["message"]
    assert request(worker, "GET", "/")[0] == 200          # and it keeps serving


def test_a_connection_that_stops_sending_is_closed_and_the_worker_serves_on(connect_cluster):
    """A request left half-sent holds one of the worker's threads only until the idle timeout
    (Jetty's 30 s under Connect), not for as long as its client likes."""
    worker = connect_cluster[0]
    with socket.create_connection(("127.0.0.1", worker.port), timeout=IDLE_TIMEOUT_S * 3) as connection:
        connection.sendall(b"GET /connectors HTTP/1.1\r\nHost: x\r\n")     # and never the blank line
        assert connection.recv(1) == b""          # closed by the worker, not by this test's timeout
    assert request(worker, "GET", "/")[0] == 200


def test_a_body_nested_too_deeply_or_a_bad_length_is_a_400(connect_cluster):
    worker = connect_cluster[0]
    code, body, _ = request(worker, "POST", "/connectors", raw=b"[" * 100_000 + b"]" * 100_000)
    assert (code, body) == (400, {"error_code": 400, "message": "Request body is not valid JSON: it is nested too "
                                                                "deeply"})
    for length in (b"abc", b"-5"):
        with socket.create_connection(("127.0.0.1", worker.port), timeout=60) as connection:
            connection.sendall(b"POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n")
            head = connection.makefile("rb").readline()
        assert head.startswith(b"HTTP/1.1 400 "), (length, head)
    assert request(worker, "GET", "/")[0] == 200
