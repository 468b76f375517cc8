"""The group page's live fragment, as the cluster's live feed renders it."""
import html

import pytest

from console.errors import NotFound
from console.groups.live import group_fragment
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.console.groups.test_views import XSS_IDS
from tests.support.groups import produce


def test_fragment_follows_the_lag_and_escapes_group_ids(cluster, engine_cluster, unique_topic):
    topic = make_topic(cluster, unique_topic(), partitions=1)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 4)
    for group in XSS_IDS:
        commit(cluster, group, {(topic, 0): 1}, metadata=group)
        fragment = group_fragment(cluster_id=cluster.pk, group_id=group)
        assert group not in fragment and html.escape(group) in fragment     # the commit metadata holds it
        assert 'data-figure="total-lag">3<' in fragment
    produce(engine_cluster.bootstrap, topic, [b"x"] * 2)
    assert 'data-figure="total-lag">5<' in group_fragment(cluster_id=cluster.pk, group_id=XSS_IDS[0])


def test_fragment_of_a_missing_group_is_not_found(cluster):
    with pytest.raises(NotFound):
        group_fragment(cluster_id=cluster.pk, group_id="no-such-group-here")


def test_the_commit_metadata_column_shows_only_when_a_commit_has_metadata(cluster, engine_cluster, unique_topic):
    topic = make_topic(cluster, unique_topic(), partitions=2)
    produce(engine_cluster.bootstrap, topic, [b"x"] * 2)
    group = f"plain-{topic}"
    commit(cluster, group, {(topic, 0): 1})
    assert "Commit metadata" not in group_fragment(cluster_id=cluster.pk, group_id=group)
    commit(cluster, group, {(topic, 1): 0}, metadata="run-42")
    fragment = group_fragment(cluster_id=cluster.pk, group_id=group)
    assert "Commit metadata" in fragment and "run-42" in fragment
