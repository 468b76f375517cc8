"""Kafka message specs that kafka-python 3.0.12 does not ship, as Kafka's own JSON files,
loaded with kafka-python's loader (`load_json`) into its `ApiMessage` codec classes.

The JSON files are Kafka's, from apache/kafka `clients/src/main/resources/common/message/`:
- ConsumerGroupHeartbeat v0-1 and ConsumerGroupDescribe v0 (KIP-848), the versions Kafka 4.0
  released, copied unchanged from commit 1eb7644349cb (trunk, 2024-10-25, 4.0.0-SNAPSHOT).
- Share groups (KIP-932), at the versions Kafka 4.2 speaks: ShareFetch v1-2 and
  ShareAcknowledge v1-2 (v2: KIP-1206's ShareAcquireMode, KIP-1222's Renew), ShareGroupDescribe
  v1, DescribeShareGroupOffsets v0-1 (v1: KIP-1226's Lag), AlterShareGroupOffsets v0 and
  DeleteShareGroupOffsets v0, copied from trunk (2025-2026). ShareGroupHeartbeat v1 is the
  2024 file with its version raised to 1: the stable version kept version 0's fields.
- The share coordinator's internal APIs (InitializeShareGroupState, ReadShareGroupState,
  WriteShareGroupState, DeleteShareGroupState, ReadShareGroupStateSummary: keys 83-87) v0,
  from commit 1eb7644349cb; the engine's brokers are their only callers.
Drop a class here once kafka-python ships its spec.
"""
from kafka.protocol.api_message import ApiMessage

_HERE = __name__


class ConsumerGroupHeartbeatRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupHeartbeatResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ConsumerGroupDescribeRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701


class ConsumerGroupDescribeResponse(ApiMessage, load_json=_HERE):
    @classmethod
    def json_patch(cls, json):
        """Authorized operations as a set of AclOperation codes, as kafka-python's own
        DescribeGroupsResponse has them (its `bitfield` type)."""
        group_fields = next(f for f in json["fields"] if f["name"] == "Groups")["fields"]
        next(f for f in group_fields if f["name"] == "AuthorizedOperations")["type"] = "bitfield"
        return json


# Share groups (KIP-932): membership, delivery and admin.
class ShareGroupHeartbeatRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ShareGroupHeartbeatResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ShareGroupDescribeRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ShareFetchRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ShareFetchResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ShareAcknowledgeRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ShareAcknowledgeResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class DescribeShareGroupOffsetsRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class DescribeShareGroupOffsetsResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class AlterShareGroupOffsetsRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class AlterShareGroupOffsetsResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class DeleteShareGroupOffsetsRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class DeleteShareGroupOffsetsResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701


class ShareGroupDescribeResponse(ApiMessage, load_json=_HERE):
    @classmethod
    def json_patch(cls, json):
        """Authorized operations as a set of AclOperation codes (kafka-python's `bitfield`)."""
        group_fields = next(f for f in json["fields"] if f["name"] == "Groups")["fields"]
        next(f for f in group_fields if f["name"] == "AuthorizedOperations")["type"] = "bitfield"
        return json


# The share coordinator's internal APIs (KIP-932), between brokers.
class InitializeShareGroupStateRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class InitializeShareGroupStateResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ReadShareGroupStateRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ReadShareGroupStateResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class WriteShareGroupStateRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class WriteShareGroupStateResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class DeleteShareGroupStateRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class DeleteShareGroupStateResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ReadShareGroupStateSummaryRequest(ApiMessage, load_json=_HERE): pass  # noqa: E701
class ReadShareGroupStateSummaryResponse(ApiMessage, load_json=_HERE): pass  # noqa: E701
