"""The share groups' rows of a snapshot (lake table `share_group_partitions`): per share group,
topic and partition, the start offset, the high watermark, the share lag and the member count,
and the bundled engine's counters where the cluster has them (null elsewhere).

Kept out of collector.py so the collector stays one function of batched reads: this is two
requests per share group coordinator (ShareGroupDescribe, DescribeShareGroupOffsets) and one
call to the engine's admin interface for every share partition at once.
"""
from __future__ import annotations

from console.analytics import lake as L
from console.kafka_gateway import GatewayError

SHARE_TYPE = "share"


def share_partition_rows(gw, group_ids: list[str], high_watermarks: dict[tuple[str, int], int]) -> list[dict]:
    if not group_ids or not gw.share_groups.supported():
        return []
    coordinators = gw.groups.find_coordinators(group_ids).found
    if not coordinators:
        return []
    offsets = gw.share_groups.offsets(coordinators).offsets
    members = {g: len(d.members) for g, d in gw.share_groups.describe(coordinators).items() if d.error is None}
    try:
        stats = {(s.group_id, s.topic, s.partition): s for s in gw.share_groups.partition_stats(None) or ()}
    except GatewayError:
        stats = {}          # the counters stay unknown this time; the offsets are kept
    rows = []
    for group_id, partitions in offsets.items():
        for o in partitions:
            if o.start_offset < 0 or o.error:
                continue
            counters = stats.get((group_id, o.topic, o.partition))
            rows.append({
                L.GROUP: group_id, L.TOPIC: o.topic, L.PARTITION: o.partition, L.START_OFFSET: o.start_offset,
                L.LOG_END_OFFSET: high_watermarks.get((o.topic, o.partition)), L.LAG: o.lag,
                L.MEMBERS: members.get(group_id, 0),
                L.IN_FLIGHT: counters.in_flight if counters else None,
                L.ACQUIRED: counters.acquired if counters else None,
                L.ARCHIVED_POISON: (counters.archived_total.get("delivery_limit", 0)
                                    + counters.archived_total.get("rejected", 0)) if counters else None,
                L.LOCK_EXPIRIES: counters.lock_expiries if counters else None})
    return rows
