"""The Kafka wire protocol: framing, the API registry, and one handler module per API key."""
