"""What the share APIs' answers share: a partition's current leader, and the endpoints of the
leaders named in NOT_LEADER_OR_FOLLOWER answers (ShareFetch and ShareAcknowledge's NodeEndpoints),
and which topics the member may read."""
from __future__ import annotations

from engine.security import authorize
from kafka_rules.acls import READ


def readable_topics(ctx):
    """A test by topic id of READ on the topic, for the share manager; None with no authorizer.
    A topic id the image does not know is let through, for the manager to answer UNKNOWN_TOPIC_ID."""
    if not authorize.enabled(ctx):
        return None
    topics = ctx.broker.image.topics_by_id

    def readable(topic_id) -> bool:
        topic = topics.get(topic_id)
        return topic is None or authorize.authorize_topic(ctx, READ, topic.name)
    return readable


def leader_of(image, topic_id, index: int) -> tuple[int, int]:
    """(leader id, leader epoch) from the metadata image; (-1, -1) when unknown."""
    topic = image.topics_by_id.get(topic_id)
    state = topic.partitions.get(index) if topic is not None else None
    return (state.leader, state.leader_epoch) if state is not None else (-1, -1)


def node_endpoints(image, node_ids, endpoint_class) -> list:
    return [endpoint_class(node_id=n.node_id, host=n.host, port=n.port, rack=n.rack)
            for node_id in sorted(node_ids) if (n := image.brokers.get(node_id)) is not None]
