"""Kafka client failures as sentences: no Python reprs reach a page."""
import kafka.errors as Errors

from console.kafka_gateway.errors import readable


def test_a_bootstrap_timeout_reads_as_a_sentence_without_the_client_s_list():
    text = readable(Errors.KafkaTimeoutError("Unable to bootstrap from ['127.0.0.1:9092', '127.0.0.1:9093']"))
    assert text == "No bootstrap server answered in time."


def test_other_timeouts_keep_the_client_s_reason():
    assert "Batch expired" in readable(Errors.KafkaTimeoutError("Batch expired"))
