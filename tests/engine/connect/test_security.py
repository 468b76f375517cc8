"""A distributed worker on a SASL_PLAINTEXT cluster: its group membership, internal topics and
the tasks' producer and consumer log in with SCRAM-SHA-256 from Kafka's worker settings, and a
command line tool logs in from its --command-config file."""
from __future__ import annotations

import pytest

from tests.engine.tools.conftest import run_tool
from tests.support.connect_worker import ConnectWorker, request, running
from tests.support.sasl import SCRAM_PASSWORD, SCRAM_USER, add_scram_user, start_sasl_engine
from tests.support.waiting import wait_until

LOGIN = {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
         "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
                             f'username="{SCRAM_USER}" password="{SCRAM_PASSWORD}";'}
# Kafka's group session bounds (at least 6 s) apply on this engine: Connect's timers fit.
TIMERS = {"session.timeout.ms": "10000", "heartbeat.interval.ms": "1000", "consumer.session.timeout.ms": "10000",
          "consumer.heartbeat.interval.ms": "1000"}


@pytest.fixture(scope="module")
def sasl_cluster(tmp_path_factory):
    engine = start_sasl_engine(tmp_path_factory.mktemp("connect-sasl"), brokers=1)
    assert add_scram_user(engine.bootstrap, SCRAM_USER, SCRAM_PASSWORD) == {SCRAM_USER: None}
    yield engine
    if engine.alive():
        engine.terminate()


def test_a_worker_and_a_tool_log_in_with_scram(sasl_cluster, tmp_path):
    config = tmp_path / "client.properties"
    config.write_text("".join(f"{k}={v}\n" for k, v in LOGIN.items()))
    created = run_tool(sasl_cluster, "topics", "--create", "--topic", "sasl-lines", "--partitions", "1",
                       "--command-config", str(config))
    assert created.stdout == "Created topic sasl-lines.\n", created.stderr

    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("".join(f"secure-{i}\n" for i in range(100)))
    worker = ConnectWorker(tmp_path / "worker", sasl_cluster.bootstrap, group="sasl-connect",
                           settings={**LOGIN, **TIMERS}, name="sasl-worker").start()
    try:
        for name, connector in (("sasl-source", {"connector.class": "FileStreamSource", "file": str(source),
                                                 "topic": "sasl-lines"}),
                                ("sasl-sink", {"connector.class": "FileStreamSink", "file": str(sink),
                                               "topics": "sasl-lines"})):
            code, body, _ = request(worker, "POST", "/connectors", {"name": name, "config": connector})
            assert code == 201, body
        for name in ("sasl-source", "sasl-sink"):
            wait_until(lambda: running(worker, name), 60, message=f"{name} running")
        wait_until(lambda: sink.exists() and sink.read_text().split() == [f"secure-{i}" for i in range(100)], 60,
                   message="every line through the SASL cluster")
        listed = run_tool(sasl_cluster, "topics", "--list", "--command-config", str(config)).stdout.split()
        assert {"sasl-lines", "sasl-connect-configs", "sasl-connect-offsets", "sasl-connect-status"} <= set(listed)
    finally:
        worker.terminate()
