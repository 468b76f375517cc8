"""kcat against the engine: -L lists brokers and topics, -P produces, -C consumes (kcat is
installed by .ci/run)."""
import shutil
import subprocess

import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic


def test_kcat_lists_brokers_and_topics(engine_cluster, topic_name):
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.fail("kcat is not installed; .ci/run installs it with apt-get install kcat")
    admin = KafkaAdminClient(bootstrap_servers=engine_cluster.bootstrap)
    admin.create_topics([NewTopic(topic_name, num_partitions=3, replication_factor=1)])
    admin.close()
    out = subprocess.run([kcat, "-L", "-b", engine_cluster.bootstrap], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    assert " 3 brokers:" in out.stdout
    for port in engine_cluster.ports:
        assert f"127.0.0.1:{port}" in out.stdout
    assert f'topic "{topic_name}" with 3 partitions:' in out.stdout


def kcat_binary() -> str:
    kcat = shutil.which("kcat")
    if kcat is None:
        pytest.fail("kcat is not installed; .ci/run installs it with apt-get install kcat")
    return kcat


def test_kcat_produces_keyed_records_and_consumes_them_back(engine_cluster, topic_name):
    kcat = kcat_binary()
    admin = KafkaAdminClient(bootstrap_servers=engine_cluster.bootstrap)
    admin.create_topics([NewTopic(topic_name, num_partitions=2, replication_factor=2)])
    admin.close()
    lines = "".join(f"key-{i}:value-{i}\n" for i in range(50))
    produced = subprocess.run([kcat, "-P", "-b", engine_cluster.bootstrap, "-t", topic_name, "-K:",
                               "-X", "acks=all"], input=lines, capture_output=True, text=True, timeout=60)
    assert produced.returncode == 0, produced.stderr
    # -e: exit at the end of every partition; -f: partition, offset, key and value per line.
    consumed = subprocess.run([kcat, "-C", "-b", engine_cluster.bootstrap, "-t", topic_name, "-o", "beginning",
                               "-e", "-f", "%p %o %k %s\\n"], capture_output=True, text=True, timeout=60)
    assert consumed.returncode == 0, consumed.stderr
    records = [line.split(" ") for line in consumed.stdout.splitlines()]
    assert sorted((key, value) for _, _, key, value in records) == sorted(
        (f"key-{i}", f"value-{i}") for i in range(50))
    by_partition: dict[str, list[int]] = {}
    for partition, offset, key, _ in records:
        by_partition.setdefault(partition, []).append(int(offset))
    assert all(offsets == list(range(len(offsets))) for offsets in by_partition.values())   # dense, in order
    assert len(by_partition) == 2   # keys hashed over both partitions by librdkafka's partitioner
