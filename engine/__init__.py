"""A Kafka-compatible streaming engine: brokers speaking the Kafka wire protocol over a segmented log."""
