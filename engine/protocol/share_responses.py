"""What the share APIs' answers share: a partition's current leader, and the endpoints of the
leaders named in NOT_LEADER_OR_FOLLOWER answers (ShareFetch and ShareAcknowledge's NodeEndpoints)."""
from __future__ import annotations


def leader_of(image, topic_id, index: int) -> tuple[int, int]:
    """(leader id, leader epoch) from the metadata image; (-1, -1) when unknown."""
    topic = image.topics_by_id.get(topic_id)
    state = topic.partitions.get(index) if topic is not None else None
    return (state.leader, state.leader_epoch) if state is not None else (-1, -1)


def node_endpoints(image, node_ids, endpoint_class) -> list:
    return [endpoint_class(node_id=n.node_id, host=n.host, port=n.port, rack=n.rack)
            for node_id in sorted(node_ids) if (n := image.brokers.get(node_id)) is not None]
