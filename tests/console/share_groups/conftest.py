"""Share groups on the shared engine for the console's tests: a topic, a group reading it from
the start, and members spoken with raw requests (tests/support/share.py)."""
from __future__ import annotations

import itertools

import pytest

from tests.console.conftest import make_topic
from tests.support.groups import produce, set_group_configs
from tests.support.share import ACCEPT, RawShareMember, offsets_of

_names = itertools.count()


@pytest.fixture
def share_queue(cluster, engine_cluster, unique_topic):
    """(topic, group): 10 records on a 1-partition topic; the group reads from the earliest."""
    topic = make_topic(cluster, unique_topic("q"))
    produce(engine_cluster.bootstrap, topic, [f"r{i}".encode() for i in range(10)])
    group = f"sg-{topic}-{next(_names)}"
    set_group_configs(engine_cluster.bootstrap, group, {"share.auto.offset.reset": "earliest"})
    return topic, group


@pytest.fixture
def worked_share_group(engine_cluster, share_queue):
    """The queue's group with one member that acquired the 10 records and accepted the first 6."""
    topic, group = share_queue
    member = RawShareMember(engine_cluster.ports[0], group, topic, "worker-1")
    member.join()
    assert offsets_of(member.fetch()) == list(range(10))
    member.acknowledge([(0, 5, [ACCEPT])])
    member.start_heartbeats()
    yield topic, group, member
    member.close()


def leave(member) -> None:
    """The member closes its share session and leaves: the group is empty."""
    member.stop_heartbeats()
    member.fetch(epoch=-1)
    assert member.heartbeat(epoch=-1).error_code == 0
