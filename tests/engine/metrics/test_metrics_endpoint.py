"""`engine serve --metrics-port P`: broker i's metrics on P+i, under the JMX exporter's names,
counting what real clients did; promtool accepts them."""
from __future__ import annotations

import urllib.request

import pytest
from kafka import KafkaConsumer, KafkaProducer
from kafka.admin import KafkaAdminClient, NewTopic
from prometheus_client.parser import text_string_to_metric_families

from tests.support.engine_process import EngineProcess, free_port_range
from tests.support.promtool import check_metrics
from tests.support.waiting import wait_until

TOPIC = "metered"
RECORDS = 25


@pytest.fixture(scope="module")
def metered_engine(tmp_path_factory):
    port = free_port_range(3)
    engine = EngineProcess(tmp_path_factory.mktemp("metrics") / "data", brokers=3,
                           extra_args=["--metrics-port", str(port)]).start()
    engine.metrics_port = port
    yield engine
    if engine.alive():
        assert engine.terminate() == 0, engine.log_text()


def scrape(engine, broker_id: int) -> bytes:
    with urllib.request.urlopen(f"http://127.0.0.1:{engine.metrics_port + broker_id}/metrics", timeout=10) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain; version=")
        return answer.read()


def samples(exposition: bytes) -> dict[tuple[str, tuple], float]:
    found = {}
    for family in text_string_to_metric_families(exposition.decode()):
        for s in family.samples:
            found[s.name, tuple(sorted(s.labels.items()))] = s.value
    return found


def total(engine, name: str, **labels) -> float:
    wanted = tuple(sorted(labels.items()))
    return sum(samples(scrape(engine, b)).get((name, wanted), 0.0) for b in range(3))


def test_produce_and_fetch_are_counted_per_topic_on_the_leaders(metered_engine):
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic(TOPIC, num_partitions=3, replication_factor=3)])
    admin.close()
    producer = KafkaProducer(bootstrap_servers=metered_engine.bootstrap, acks="all")
    for i in range(RECORDS):
        producer.send(TOPIC, value=b"x" * 100, partition=i % 3)
    producer.flush()
    producer.close()
    consumer = KafkaConsumer(TOPIC, bootstrap_servers=metered_engine.bootstrap, auto_offset_reset="earliest",
                             consumer_timeout_ms=200, enable_auto_commit=False)
    read = []
    wait_until(lambda: read.extend(consumer) or len(read) >= RECORDS, timeout=30)
    consumer.close()

    assert total(metered_engine, "kafka_server_brokertopicmetrics_messagesin_total", topic=TOPIC) == RECORDS
    bytes_in = total(metered_engine, "kafka_server_brokertopicmetrics_bytesin_total", topic=TOPIC)
    assert RECORDS * 100 < bytes_in < RECORDS * 100 + 3 * 4096     # the batches as sent
    # Consumers' fetches only (followers replicate the same bytes and are not counted).
    assert total(metered_engine, "kafka_server_brokertopicmetrics_bytesout_total", topic=TOPIC) == bytes_in
    # The broker-wide meter (no topic label) includes the topic's.
    assert total(metered_engine, "kafka_server_brokertopicmetrics_messagesin_total") >= RECORDS
    # kafka-python fetched through incremental fetch sessions (KIP-227), which the leaders keep.
    assert total(metered_engine, "kafka_server_fetchsessioncache_numincrementalfetchsessions") >= 1
    assert total(metered_engine, "kafka_server_fetchsessioncache_numincrementalfetchpartitionscached") >= 3


def test_requests_errors_and_latency_per_api(metered_engine):
    producer = KafkaProducer(bootstrap_servers=metered_engine.bootstrap)
    producer.send("requests-topic", b"v").get(timeout=30)
    producer.close()
    found = {}
    for b in range(3):
        for key, value in samples(scrape(metered_engine, b)).items():
            found[key] = found.get(key, 0) + value
    produce_requests = sum(v for (name, labels), v in found.items()
                           if name == "kafka_network_requestmetrics_requests_total" and ("request", "Produce") in labels)
    assert produce_requests >= 1
    assert found["kafka_network_requestmetrics_errors_total", (("error", "NONE"), ("request", "Produce"))] >= 1
    assert found["kafka_network_requestmetrics_totaltimems_count", (("request", "Produce"),)] >= 1
    p99 = found["kafka_network_requestmetrics_totaltimems", (("quantile", "0.99"), ("request", "Metadata"))]
    assert p99 > 0
    assert found["kafka_network_requestmetrics_requestqueuetimems_count", (("request", "Metadata"),)] >= 1


def test_replica_and_controller_gauges_follow_a_stopped_broker(metered_engine, tmp_path):
    admin = KafkaAdminClient(bootstrap_servers=metered_engine.bootstrap)
    admin.create_topics([NewTopic("replicated", num_partitions=6, replication_factor=3)])
    admin.close()
    assert total(metered_engine, "kafka_controller_kafkacontroller_activecontrollercount") == 1
    assert total(metered_engine, "kafka_server_replicamanager_underreplicatedpartitions") == 0
    stopped = 2
    urllib.request.urlopen(urllib.request.Request(f"{metered_engine.admin_url}/brokers/{stopped}/stop", method="POST",
                                                  headers={"X-Engine-Admin-Token": metered_engine.admin_token}),
                           timeout=60).read()
    try:
        live = [b for b in range(3) if b != stopped]

        def under_replicated() -> float:
            return sum(samples(scrape(metered_engine, b)).get(
                ("kafka_server_replicamanager_underreplicatedpartitions", ()), 0) for b in live)
        wait_until(lambda: under_replicated() >= 6, timeout=30)
        with pytest.raises(OSError):           # a stopped broker's endpoint is gone, as a dead JVM's
            scrape(metered_engine, stopped)
        shrinks = sum(samples(scrape(metered_engine, b))[("kafka_server_replicamanager_isrshrinks_total", ())]
                      for b in live)
        assert shrinks == 0      # a controlled shutdown moves the ISR through the controller, not a shrink
    finally:
        urllib.request.urlopen(urllib.request.Request(f"{metered_engine.admin_url}/brokers/{stopped}/start",
                                                      method="POST",
                                                      headers={"X-Engine-Admin-Token": metered_engine.admin_token}),
                               timeout=60).read()
    wait_until(lambda: total(metered_engine, "kafka_server_replicamanager_underreplicatedpartitions") == 0, timeout=60)
    assert total(metered_engine, "kafka_server_replicamanager_isrexpands_total") >= 6


def test_promtool_accepts_every_broker_endpoint(metered_engine):
    for b in range(3):
        result = check_metrics(scrape(metered_engine, b))
        assert result.returncode == 0, result.stdout.decode() + result.stderr.decode()


def test_other_paths_are_not_found(metered_engine):
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(f"http://127.0.0.1:{metered_engine.metrics_port}/admin", timeout=10)
    assert refused.value.code == 404


def test_families_asked_by_name(metered_engine):
    name = "kafka_log_logcleanermanager_uncleanable_partitions_count"
    with urllib.request.urlopen(f"http://127.0.0.1:{metered_engine.metrics_port + 1}/metrics?name[]={name}",
                                timeout=10) as answer:
        found = samples(answer.read())
    assert found == {(name, (("logdirectory", str(metered_engine.data_dir / "broker-1")),)): 0.0}
