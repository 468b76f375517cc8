"""The sentences a Spark cluster's executors earn when they lack what the analytics need. The
probes themselves run on a real cluster in test_spark_cluster.py."""
import pytest

from console.analytics.cluster_check import lake_path, python_mismatch, readable_spark_error
from console.kafka_gateway.spark_source import NAME, KafkaSourceError


def test_a_python_minor_version_other_than_the_drivers_is_named_with_its_host():
    assert python_mismatch("3.11", {"w1": "3.11", "w2": "3.11"}) is None
    sentence = python_mismatch("3.11", {"w1": "3.11", "w2": "3.12"})
    assert sentence.startswith("The Spark executors' Python differs from the analytics worker's (Python 3.11): "
                               "w2 runs Python 3.12.")
    assert "spark.pyspark.python" in sentence


def test_only_a_lake_of_plain_files_is_looked_for_on_the_executors():
    assert lake_path("/data/lake") == "/data/lake"
    assert lake_path("file:///mnt/shared/lake") == "/mnt/shared/lake"
    assert lake_path("s3a://bucket/lake") is None and lake_path("hdfs://nn/lake") is None


def test_a_failed_run_shows_what_went_wrong_not_the_java_call_that_carried_it(spark):
    """A real failure in a Python worker (the Kafka data source planning a read), as a run meets it."""
    with pytest.raises(Exception) as error:
        spark.read.format(NAME).option("kafka.bootstrap.servers", "127.0.0.1:1").option("assign", "[1, 2]").load() \
            .collect()
    assert "An error occurred while calling" in str(error.value) or "Traceback" in str(error.value)
    assert readable_spark_error(error.value).startswith("KafkaSourceError: assign must be JSON like")
    assert readable_spark_error(KafkaSourceError("Option kafka.bootstrap.servers is required.")) == \
        "Option kafka.bootstrap.servers is required."
