"""Operator commands. KAFKA_TOOLS are Kafka's own command line tools, each `python -m engine
NAME` with the options and output of kafka-NAME.sh, speaking only the Kafka protocol."""
from __future__ import annotations

from engine.tools import (configs_command, console_consumer, console_producer, partition_commands, perf_test,
                          reassign_command, topics_command)

KAFKA_TOOLS = {"topics": topics_command, "configs": configs_command, "console-producer": console_producer,
               "console-consumer": console_consumer, "producer-perf-test": perf_test,
               "consumer-perf-test": perf_test, "leader-election": partition_commands,
               "log-dirs": partition_commands, "delete-records": partition_commands,
               "get-offsets": partition_commands, "reassign-partitions": reassign_command}
