"""The min.insync.replicas check shared by acks=all produces and transaction markers."""
from __future__ import annotations

import kafka.errors as Errors

from engine.errors import ApiError


def check_min_insync(broker, partition, error) -> None:
    """Raise ApiError(error) if the partition's ISR is smaller than its topic's min.insync.replicas."""
    state = broker.image.topics.get(partition.topic)
    if state is None:   # deleted while an acks=all request waited
        raise ApiError(Errors.UnknownTopicOrPartitionError)
    min_isr = int(state.configs.get("min.insync.replicas", broker.config.topic_default("min.insync.replicas")[0]))
    if len(partition.isr) < min_isr:
        raise ApiError(error, f"The size of the current ISR {partition.isr} is insufficient to satisfy the "
                              f"min.isr requirement of {min_isr} for partition {partition.topic}-{partition.index}")
