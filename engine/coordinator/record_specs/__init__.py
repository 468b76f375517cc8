"""Kafka's schemas of the consumer group protocol's records in `__consumer_offsets` (KIP-848),
as Kafka's own JSON files, loaded with kafka-python's loader into its `ApiData` codec
(which writes the int16 version first, as these records have it).

The JSON files are copied unchanged from apache/kafka
`group-coordinator/src/main/resources/common/message/` at commit 1eb7644349cb (trunk,
2024-10-25, 4.0.0-SNAPSHOT). Key versions: 3 group epoch, 5 member metadata, 6 target
assignment epoch, 7 a member's target assignment, 8 a member's current assignment. Version
4 (ConsumerGroupPartitionMetadata) is not written: subscribed topics' metadata is taken
from the metadata image when a group is loaded.

Share groups (KIP-932), from the same commit: in `__consumer_offsets`, key 10 a member's
metadata, 11 the group epoch, 12 the target assignment epoch, 13 a member's target
assignment, 14 a member's current assignment, 15 the share partitions whose state the share
coordinator holds (ShareGroupStatePartitionMetadata); key 9 (ShareGroupPartitionMetadata) is
not written, as key 4 is not. In `__share_group_state` (the share coordinator's files from
`share-coordinator/src/main/resources/common/message/`): key 0 ShareSnapshot and key 1
ShareUpdate, a share partition's full state and a change to it.
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

class ShareGroupMemberMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupMemberMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupTargetAssignmentMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupTargetAssignmentMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupTargetAssignmentMemberKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupTargetAssignmentMemberValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupCurrentMemberAssignmentKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupCurrentMemberAssignmentValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupStatePartitionMetadataKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareGroupStatePartitionMetadataValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareSnapshotKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareSnapshotValue(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareUpdateKey(ApiData, load_json=_HERE): pass  # noqa: E701
class ShareUpdateValue(ApiData, load_json=_HERE): pass  # noqa: E701
