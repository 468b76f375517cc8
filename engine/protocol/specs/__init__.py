"""Kafka message specs that kafka-python 3.0.12 does not ship, as Kafka's own JSON files,
loaded with kafka-python's loader (`load_json`) into its `ApiMessage` codec classes.

The JSON files are copied unchanged from apache/kafka
`clients/src/main/resources/common/message/` at commit 1eb7644349cb (trunk, 2024-10-25,
4.0.0-SNAPSHOT): ConsumerGroupHeartbeat v0-1 and ConsumerGroupDescribe v0 (KIP-848), the
versions Kafka 4.0 released. Drop a class here once kafka-python ships its spec.
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
