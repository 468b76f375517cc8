"""Operator commands. KAFKA_TOOLS are Kafka's own command line tools, each `python -m engine
NAME` with the options and output of kafka-NAME.sh, speaking only the Kafka protocol."""
from __future__ import annotations

from engine.tools import configs_command, topics_command

KAFKA_TOOLS = {"topics": topics_command, "configs": configs_command}
