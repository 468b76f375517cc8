"""Connectors written in Python against engine.connect.api, loaded from the workers'
plugin.path: listed with their versions, run end to end, and failing on purpose: a task that
raises is FAILED with its trace while the worker keeps serving, and a restart of failed tasks
brings it back."""
from __future__ import annotations

import json

from confluent_kafka import Consumer, TopicPartition

from tests.engine.connect.test_rest_api import _states
from tests.support.connect_worker import request, running, status_of
from tests.support.groups import create_topic
from tests.support.waiting import wait_until


def _values(bootstrap: str, topic: str, count: int) -> list:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "plugin-check", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic, 0, 0)])
    values = []
    try:
        for _ in range(100):
            values += [json.loads(m.value())["payload"] for m in consumer.consume(1000, 0.5) if m.error() is None]
            if len(values) >= count:
                break
    finally:
        consumer.close()
    return values


def test_python_plugins_are_listed_with_their_type_and_version(connect_cluster):
    plugins = request(connect_cluster[0], "GET", "/connector-plugins")[1]
    by_class = {p["class"]: p for p in plugins}
    assert by_class["counting_plugin.CountingSourceConnector"] == {
        "class": "counting_plugin.CountingSourceConnector", "type": "source", "version": "1.2.3"}
    assert by_class["counting_plugin.CollectingSinkConnector"]["type"] == "sink"
    assert by_class["org.apache.kafka.connect.file.FileStreamSourceConnector"]["type"] == "source"
    everything = request(connect_cluster[0], "GET", "/connector-plugins?connectorsOnly=false")[1]
    json_converter = {"class": "org.apache.kafka.connect.json.JsonConverter", "type": "converter", "version": "3.9.0"}
    assert json_converter in everything
    definition = request(connect_cluster[1], "GET", "/connector-plugins/CountingSource/config")[1]
    assert [d["name"] for d in definition] == ["topic", "count", "fail.after"]
    assert definition[1] | {} == {**definition[1], "type": "INT", "default_value": "10", "required": False}


def test_a_python_source_feeds_a_python_sink(connect_cluster, connect_engine, tmp_path):
    create_topic(connect_engine.bootstrap, "counting", 1)
    out = tmp_path / "collected.txt"
    assert request(connect_cluster[0], "POST", "/connectors", {"name": "counting-source", "config": {
        "connector.class": "CountingSource", "topic": "counting", "count": "250"}})[0] == 201
    assert request(connect_cluster[1], "POST", "/connectors", {"name": "collecting-sink", "config": {
        "connector.class": "counting_plugin.CollectingSinkConnector", "topics": "counting",
        "file": str(out)}})[0] == 201
    wait_until(lambda: out.exists() and len(out.read_text().splitlines()) >= 250, 60, message="250 values collected")
    assert [line.split(":")[3] for line in out.read_text().splitlines()] == [str(i) for i in range(250)]
    assert _values(connect_engine.bootstrap, "counting", 250) == list(range(250))
    source_offsets = request(connect_cluster[0], "GET", "/connectors/counting-source/offsets")[1]
    wait_until(lambda: request(connect_cluster[0], "GET", "/connectors/counting-source/offsets")[1] ==
               {"offsets": [{"partition": {"task": "0"}, "offset": {"next": 250}}]}, 30, message="source offsets")
    assert source_offsets["offsets"][0]["partition"] == {"task": "0"}
    for name in ("counting-source", "collecting-sink"):
        assert request(connect_cluster[0], "DELETE", f"/connectors/{name}")[0] == 204


def test_a_failing_task_is_failed_with_its_trace_and_restarts_on_request(connect_cluster, connect_engine):
    create_topic(connect_engine.bootstrap, "failing", 1)
    assert request(connect_cluster[1], "POST", "/connectors", {"name": "failing-source", "config": {
        "connector.class": "CountingSource", "topic": "failing", "count": "100", "fail.after": "20"}})[0] == 201
    def failed(worker):
        return (s := status_of(worker, "failing-source")) and s["tasks"] and s["tasks"][0]["state"] == "FAILED" and s
    # Every worker's view: the leader plans the restart below from its own view of the status topic.
    status = wait_until(lambda: all(failed(w) for w in connect_cluster) and failed(connect_cluster[0]), 60,
                        message="task failed, as every worker sees it")
    assert status["connector"]["state"] == "RUNNING"
    trace = status["tasks"][0]["trace"]
    assert "counting task 0 gave up at 20 on purpose" in trace and "Traceback" in trace
    assert request(connect_cluster[0], "GET", "/connectors/failing-source/tasks/0/status")[1]["trace"] == trace
    assert request(connect_cluster[1], "GET", "/")[0] == 200        # the workers keep serving

    # Let it succeed this time, then restart only what failed.
    config = request(connect_cluster[0], "GET", "/connectors/failing-source/config")[1]
    assert request(connect_cluster[0], "PUT", "/connectors/failing-source/pause")[0] == 202
    code, body, _ = request(connect_cluster[1], "POST", "/connectors/failing-source/restart?includeTasks=true"
                                                         "&onlyFailed=true")
    assert code == 202
    assert body["connector"]["state"] != "RESTARTING" and body["tasks"][0]["state"] == "RESTARTING"
    assert request(connect_cluster[1], "PUT", "/connectors/failing-source/config",
                   {**config, "fail.after": "-1"})[0] == 200
    assert request(connect_cluster[0], "PUT", "/connectors/failing-source/resume")[0] == 202
    wait_until(lambda: running(connect_cluster[0], "failing-source"), 60, message="running after the fix")
    assert request(connect_cluster[0], "DELETE", "/connectors/failing-source")[0] == 204


def test_a_connector_that_cannot_start_is_failed_and_the_others_run_on(connect_cluster):
    assert request(connect_cluster[0], "POST", "/connectors", {"name": "broken-start", "config": {
        "connector.class": "counting_plugin.BrokenStartConnector"}})[0] == 201
    status = wait_until(lambda: (s := status_of(connect_cluster[1], "broken-start")) and
                        s["connector"]["state"] == "FAILED" and s, 60, message="connector failed")
    assert "this connector never starts" in status["connector"]["trace"]
    assert status["tasks"] == []
    wait_until(lambda: _states(connect_cluster[0], "broken-start") == ("FAILED", []), 30,
               message="the other worker reads the same status")
    assert request(connect_cluster[1], "DELETE", "/connectors/broken-start")[0] == 204
