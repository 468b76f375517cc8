"""The console's only door to Kafka: `open_gateway(settings)` and the records it returns."""
from console.kafka_gateway.client import Gateway, group_partitions, open_gateway
from console.kafka_gateway.errors import GatewayError
from console.kafka_gateway.records import (
                                           NO_LEADER,
                                           BrokerNode,
                                           ClusterMetadata,
                                           ConfigEntry,
                                           ConnectionSettings,
                                           ElectionResult,
                                           EngineBroker,
                                           PartitionInfo,
                                           PartitionOffsets,
                                           ReplicaLogDir,
                                           TopicInfo,
)

__all__ = ["NO_LEADER", "BrokerNode", "ClusterMetadata", "ConfigEntry", "ConnectionSettings", "ElectionResult",
           "EngineBroker", "Gateway", "GatewayError", "PartitionInfo",
           "PartitionOffsets", "ReplicaLogDir", "TopicInfo", "group_partitions", "open_gateway"]
