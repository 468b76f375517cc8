"""Queue health from real snapshots: the collector records a share group's partitions in the
analytics lake (beside the consumer groups), and the share group page judges the last of them.
(The lag history job on such rows: tests/console/analytics/test_share_lag.py.)"""
from __future__ import annotations

import datetime as dt

from console.analytics import lake as L
from console.analytics.collector import snapshot_collect
from console.analytics.storage import recent_snapshot_rows
from console.share_groups import selectors
from tests.support.groups import set_group_configs
from tests.support.share import RELEASE, RawShareMember, acquired
from tests.support.waiting import wait_until

NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def test_poison_records_are_flagged_from_the_lakes_snapshots(cluster, engine_cluster, share_queue, settings,
                                                             tmp_path):
    topic, group = share_queue
    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    set_group_configs(engine_cluster.bootstrap, group, {"share.delivery.count.limit": "2"})
    member = RawShareMember(engine_cluster.ports[0], group, topic, "worker-1")
    try:
        member.join()
        assert acquired(member.fetch(max_records=1, mode=1)) == [(0, 0, 1)]
        # The first snapshot must hold the share partition: its state is written after the fetch.
        wait_until(lambda: selectors.share_group_detail(cluster=cluster, group_id=group).partitions, timeout=60,
                   message="the share partition's state described")
        snapshot_collect(cluster=cluster, lake_url=settings.ANALYTICS_LAKE, taken_at=NOW - dt.timedelta(seconds=60))
        assert acquired(member.fetch(acks=[(0, 0, [RELEASE])], max_records=1, mode=1)) == [(0, 0, 2)]
        snapshot_collect(cluster=cluster, lake_url=settings.ANALYTICS_LAKE, taken_at=NOW - dt.timedelta(seconds=30))
        member.fetch(acks=[(0, 0, [RELEASE])], max_records=0, mode=-1)      # the limit: archived as poison
        snapshot_collect(cluster=cluster, lake_url=settings.ANALYTICS_LAKE, taken_at=NOW)
        view = selectors.share_group_detail(cluster=cluster, group_id=group)
    finally:
        member.close()
    [partition] = view.partitions
    assert (partition.status, partition.start_offset, partition.archived_poison_total) == ("POISON", 1, 1)
    assert "1 record archived in the last 1 min" in partition.flags[0].reason
    assert view.health_status == "POISON" and view.health_as_of == NOW

    rows = recent_snapshot_rows(lake_url=settings.ANALYTICS_LAKE, cluster_id=cluster.pk,
                                table=L.SHARE_GROUP_PARTITIONS, snapshots=10, where={L.GROUP: group})
    assert [(r[L.START_OFFSET], r[L.LAG], r[L.ACQUIRED], r[L.ARCHIVED_POISON], r[L.MEMBERS]) for r in rows] == [
        (0, 10, 1, 0, 1), (0, 10, 1, 0, 1), (1, 9, 0, 1, 1)]
