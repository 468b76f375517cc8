"""One partition whose data the log cleaner cannot read is marked uncleanable, logged once, and
reported in DescribeConfigs; every other compacted partition, `__consumer_offsets` included,
goes on being cleaned (Kafka's LogCleanerManager)."""
from __future__ import annotations

from engine.coordinator.group_store import OFFSETS_TOPIC, partition_for
from engine.protocol.configs import UNCLEANABLE_PARTITIONS
from tests.engine.protocol.admin_support import admin_client, broker_configs
from tests.engine.protocol.test_compaction import read_from_zero
from tests.support.groups import GroupClient
from tests.support.planted_batches import POISON_CONFIGS
from tests.support.waiting import wait_until


def uncleanable(bootstrap: str) -> str | None:
    admin = admin_client(bootstrap)
    try:
        return broker_configs(admin, 0)[UNCLEANABLE_PARTITIONS]["value"]
    finally:
        admin.close()


def test_the_partition_the_cleaner_cannot_read_is_reported_and_the_others_are_cleaned(poisoned_engine):
    poisoned = poisoned_engine
    engine = poisoned.engine
    client = GroupClient(engine, "offsets-while-poisoned")
    try:
        for offset in range(1, 151):
            assert client.commit({(poisoned.healthy, 0): offset}) == {(poisoned.healthy, 0): 0}
    finally:
        client.close()

    wait_until(lambda: uncleanable(engine.bootstrap) == f"{poisoned.topic}-0", message="the partition reported")
    for partition in (0, 1):   # 30 records of 5 keys were written to each
        wait_until(lambda: len(read_from_zero(engine.bootstrap, poisoned.healthy, partition)) < 30,
                   message=f"{poisoned.healthy}-{partition} compacted")
    shard = partition_for("offsets-while-poisoned", int(POISON_CONFIGS["offsets.topic.num.partitions"]))
    wait_until(lambda: len([r for r in read_from_zero(engine.bootstrap, OFFSETS_TOPIC, shard)
                            if b"offsets-while-poisoned" in r[1]]) < 20, message="__consumer_offsets compacted")
    log = engine.log_path.read_text(errors="replace")
    assert log.count(f"Cleaning of {poisoned.topic}-0 failed") == 1      # logged once, not every round
    assert "Traceback" not in log
