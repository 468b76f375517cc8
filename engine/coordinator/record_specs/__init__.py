"""Kafka's schemas of the consumer group protocol's records in `__consumer_offsets` (KIP-848),
as Kafka's own JSON files, loaded with kafka-python's loader into its `ApiData` codec
(which writes the int16 version first, as these records have it).

The JSON files are copied unchanged from apache/kafka
`group-coordinator/src/main/resources/common/message/` at commit 1eb7644349cb (trunk,
2024-10-25, 4.0.0-SNAPSHOT). Key versions: 3 group epoch, 5 member metadata, 6 target
assignment epoch, 7 a member's target assignment, 8 a member's current assignment. Version
4 (ConsumerGroupPartitionMetadata) is not written: subscribed topics' metadata is taken
from the metadata image when a group is loaded.
"""
from kafka.protocol.api_data import ApiData

_HERE = __name__


class ConsumerGroupMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupMemberMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupMemberMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupTargetAssignmentMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupTargetAssignmentMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupTargetAssignmentMemberKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupTargetAssignmentMemberValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupCurrentMemberAssignmentKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupCurrentMemberAssignmentValue(ApiData, load_json=_HERE): pass  # noqa: E701
