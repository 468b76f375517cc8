"""Operator commands. KAFKA_TOOLS are Kafka's own command line tools, each `python -m engine
NAME` with the options and output of kafka-NAME.sh, speaking only the Kafka protocol: the name
and the module that serves it (engine/__main__.py imports only the one that runs)."""
from __future__ import annotations

KAFKA_TOOLS = {"topics": "engine.tools.topics_command", "configs": "engine.tools.configs_command",
               "console-producer": "engine.tools.console_producer",
               "console-consumer": "engine.tools.console_consumer",
               "producer-perf-test": "engine.tools.perf_test", "consumer-perf-test": "engine.tools.perf_test",
               "leader-election": "engine.tools.partition_commands", "log-dirs": "engine.tools.partition_commands",
               "delete-records": "engine.tools.partition_commands", "get-offsets": "engine.tools.partition_commands",
               "reassign-partitions": "engine.tools.reassign_command"}
