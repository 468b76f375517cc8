"""kcat -L lists the brokers and topics (kcat is installed by .ci/run)."""
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
