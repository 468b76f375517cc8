"""What the analytics' Spark session does before a cluster runs anything: find the master,
ship the project, size the shuffles. The cluster itself is in test_spark_cluster.py."""
import socket
import time
import zipfile

import pytest

from console.analytics.cluster_check import SparkUnavailable
from console.analytics.launch import MAX_SHUFFLE_PARTITIONS, SHUFFLE_PARTITION_BYTES, shuffle_partitions
from console.analytics.spark import is_cluster, master_addresses, master_wait, project_archive


def test_master_urls_are_read_as_kafka_operators_write_them():
    assert master_addresses("spark://a:7077,b:7078") == [("a", 7077), ("b", 7078)]
    assert master_addresses("yarn") == [] and not is_cluster("local[2]") and is_cluster("spark://a:7077")


def test_a_master_that_does_not_answer_is_a_sentence_after_the_wait_not_a_hang():
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(SparkUnavailable) as error:
        master_wait(f"spark://127.0.0.1:{port}", seconds=1)
    assert time.monotonic() - started < 30
    assert str(error.value).startswith(f"The Spark master spark://127.0.0.1:{port} does not answer: 127.0.0.1:{port} (")


def test_the_shipped_project_holds_every_package_file_and_no_compiled_one(tmp_path):
    with zipfile.ZipFile(project_archive(str(tmp_path))) as archive:
        names = set(archive.namelist())
    assert {"console/kafka_gateway/spark_source.py", "engine/protocol/specs/ConsumerGroupHeartbeatRequest.json",
            "kafka_rules/__init__.py"} <= names
    assert not any(n.endswith(".pyc") or "__pycache__" in n for n in names)


def test_shuffle_partitions_follow_the_input_within_bounds():
    assert shuffle_partitions(input_bytes=3 * 2**20, cores=2) == 2
    assert shuffle_partitions(input_bytes=10 * SHUFFLE_PARTITION_BYTES + 1, cores=2) == 12   # 6 whole waves
    assert shuffle_partitions(input_bytes=3 * SHUFFLE_PARTITION_BYTES, cores=2) == 4
    assert shuffle_partitions(input_bytes=4 * SHUFFLE_PARTITION_BYTES, cores=3) == 6
    assert shuffle_partitions(input_bytes=10**13, cores=2) == MAX_SHUFFLE_PARTITIONS
