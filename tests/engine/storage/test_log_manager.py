import dataclasses

import pytest

from engine.storage.checkpoint import OffsetCheckpointFile
from engine.storage.log_config import LogConfig
from engine.storage.log_loader import RecoveryStats
from engine.storage.log_manager import LogManager

from .conftest import BASE_TS, make_batch, read_all, values

CONFIG = LogConfig(segment_bytes=2048, index_interval_bytes=256)
TOPICS = [("orders", 0), ("my-topic", 3), ("a.b-c_d", 1), ("x-1", 10)]


def fill(log, batches=10):
    for i in range(batches):
        log.append(make_batch(values(5, f"{i}-", 20)), leader_epoch=0, now_ms=BASE_TS)


@pytest.fixture
def manager(tmp_path):
    mgr = LogManager(tmp_path)
    mgr.load(lambda topic: CONFIG, BASE_TS)
    yield mgr
    for log in mgr.all_logs().values():
        log.close()


def test_create_and_restart_with_dashes_and_dots_in_topic_names(tmp_path, manager):
    contents = {}
    for topic, partition in TOPICS:
        log = manager.get_or_create_log(topic, partition, CONFIG, BASE_TS)
        assert manager.get_or_create_log(topic, partition, CONFIG, BASE_TS) is log
        fill(log, 10 + partition)
        contents[(topic, partition)] = read_all(log)
    assert (tmp_path / "a.b-c_d-1").is_dir() and (tmp_path / "x-1-10").is_dir()
    manager.shutdown()
    assert (tmp_path / ".kafka_cleanshutdown").exists()
    recovery = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint").read()
    assert recovery == {tp: len(records) for tp, records in contents.items()}

    seen = []
    restarted = LogManager(tmp_path)
    restarted.load(lambda topic: seen.append(topic) or CONFIG, BASE_TS)
    assert restarted.had_clean_shutdown
    assert not (tmp_path / ".kafka_cleanshutdown").exists()
    assert sorted(seen) == sorted(t for t, _ in TOPICS)
    assert set(restarted.all_logs()) == set(TOPICS)
    for tp, records in contents.items():
        assert read_all(restarted.get_log(*tp)) == records
    assert restarted.get_log("orders", 1) is None
    restarted.shutdown()


def test_restart_without_clean_shutdown_recovers(tmp_path, manager):
    log = manager.get_or_create_log("t", 0, CONFIG, BASE_TS)
    fill(log, 30)
    records = read_all(log)
    manager.checkpoint()
    for segment in log.segments:  # crash
        segment.close()
    restarted = LogManager(tmp_path)
    restarted.load(lambda topic: CONFIG, BASE_TS)
    assert not restarted.had_clean_shutdown
    assert read_all(restarted.get_log("t", 0)) == records
    restarted.shutdown()


def test_log_start_offsets_are_checkpointed(tmp_path, manager):
    log = manager.get_or_create_log("t", 0, CONFIG, BASE_TS)
    fill(log, 30)
    log.delete_records_before(17)
    manager.shutdown()
    assert OffsetCheckpointFile(tmp_path / "log-start-offset-checkpoint").read() == {("t", 0): 17}
    restarted = LogManager(tmp_path)
    restarted.load(lambda topic: CONFIG, BASE_TS)
    assert restarted.get_log("t", 0).log_start_offset == 17
    restarted.shutdown()


def test_delete_log(tmp_path, manager):
    log = manager.get_or_create_log("my-topic", 0, CONFIG, BASE_TS)
    fill(log)
    manager.get_or_create_log("my-topic", 1, CONFIG, BASE_TS)
    assert manager.delete_log("my-topic", 0)
    assert not manager.delete_log("my-topic", 0)
    assert manager.get_log("my-topic", 0) is None
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_dir()) == ["my-topic-1"]
    recovery = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint").read()
    assert ("my-topic", 0) not in recovery
    # Re-created under the same name, it starts empty.
    assert manager.get_or_create_log("my-topic", 0, CONFIG, BASE_TS).log_end_offset == 0


def test_leftover_delete_dirs_and_strange_dirs_are_handled_at_load(tmp_path):
    (tmp_path / "gone-0.0123456789abcdef0123456789abcdef-delete").mkdir()
    (tmp_path / "gone-0.0123456789abcdef0123456789abcdef-delete" / "x.log").write_bytes(b"1")
    (tmp_path / "not a partition").mkdir()
    mgr = LogManager(tmp_path)
    mgr.load(lambda topic: CONFIG, BASE_TS)
    assert mgr.all_logs() == {}
    assert not (tmp_path / "gone-0.0123456789abcdef0123456789abcdef-delete").exists()
    mgr.shutdown()


def test_illegal_topic_names_are_refused(manager):
    for topic in ("../etc", "a/b", "", "x" * 250):
        with pytest.raises(ValueError):
            manager.get_or_create_log(topic, 0, CONFIG, BASE_TS)


def test_run_retention_and_flush_dirty_logs(tmp_path, manager):
    day = 24 * 3600 * 1000
    config = dataclasses.replace(CONFIG, retention_ms=day, flush_ms=1000)
    log = manager.get_or_create_log("t", 0, config, BASE_TS)
    for i in range(30):
        log.append(make_batch(values(5, size=20), base_ts=BASE_TS - 2 * day),
                   leader_epoch=0, now_ms=BASE_TS)
    log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS)
    assert manager.run_retention(BASE_TS, {("t", 0): 0}) == 0      # nothing replicated yet
    assert manager.run_retention(BASE_TS, {}) == 0                  # no replica state: left alone
    assert manager.run_retention(BASE_TS, {("t", 0): log.log_end_offset}) > 0
    assert log.log_start_offset > 0
    starts = OffsetCheckpointFile(tmp_path / "log-start-offset-checkpoint").read()
    assert starts == {("t", 0): log.log_start_offset}
    log.append(make_batch(values(1)), leader_epoch=0, now_ms=BASE_TS)
    assert log.unflushed_messages > 0
    assert manager.flush_dirty_logs(BASE_TS + 10) == 0  # flush.ms not reached
    assert manager.flush_dirty_logs(BASE_TS + 2000) == 1
    assert log.recovery_point == log.log_end_offset
    assert manager.flush_dirty_logs(BASE_TS + 5000) == 0  # nothing left to flush


def test_remove_expired_producers(manager):
    log = manager.get_or_create_log("t", 0, CONFIG, BASE_TS)
    log.append(make_batch(values(2), producer=(77, 0, 0)), leader_epoch=0, now_ms=BASE_TS)
    assert manager.remove_expired_producers(BASE_TS + 10, expiration_ms=1000) == 0
    assert manager.remove_expired_producers(BASE_TS + 2000, expiration_ms=1000) == 1
    assert dict(log.producer_state.producers) == {}


@pytest.mark.parametrize("garbage", [b"", b"0\n2\nt 0 5\n", b"\xff\xfe garbled \x00", b"7\n1\nt 0 zz\n"])
def test_garbled_checkpoints_are_ignored_and_the_segments_recovered(tmp_path, manager, caplog, garbage):
    """A checkpoint only saves work: a damaged one is a warning, never a failed start."""
    log = manager.get_or_create_log("t", 0, CONFIG, BASE_TS)
    fill(log, 30)
    records = read_all(log)
    log.delete_records_before(7)
    manager.shutdown()
    last = sorted((tmp_path / "t-0").glob("*.log"))[-1]
    with last.open("ab") as segment:
        segment.write(b"\x00" * 30)    # a torn tail that only a full recovery removes
    for name in ("recovery-point-offset-checkpoint", "log-start-offset-checkpoint"):
        (tmp_path / name).write_bytes(garbage)
    (tmp_path / "t-0" / "leader-epoch-checkpoint").write_bytes(garbage)

    restarted = LogManager(tmp_path)
    restarted.load(lambda topic: CONFIG, BASE_TS)
    recovered = restarted.get_log("t", 0)
    assert recovered.log_start_offset == 0     # its checkpoint lost: the first segment's base
    assert read_all(recovered) == records
    assert recovered.log_end_offset == log.log_end_offset
    assert recovered.leader_epoch_cache.entries == [(0, 0)]   # rebuilt from the batches
    assert "ignoring it" in caplog.text and "rebuilt from the log's batches" in caplog.text
    restarted.shutdown()
    again = LogManager(tmp_path)    # and the next start reads the rewritten checkpoints quietly
    caplog.clear()
    again.load(lambda topic: CONFIG, BASE_TS)
    assert "ignoring it" not in caplog.text
    again.shutdown()


def test_loading_on_threads_recovers_only_after_an_unclean_shutdown_and_cuts_a_torn_tail(tmp_path, manager):
    for partition in range(12):
        fill(manager.get_or_create_log("t", partition, CONFIG, BASE_TS), 3)
    manager.shutdown(threads=4)

    clean = LogManager(tmp_path)
    clean.load(lambda topic: CONFIG, BASE_TS, threads=4)
    assert clean.load_stats == RecoveryStats(logs=12, recovered_segments=0, truncated_bytes=0)
    for log in clean.all_logs().values():
        fill(log, 1)                                   # unflushed: above every recovery point
    contents = {tp: read_all(log) for tp, log in clean.all_logs().items()}
    active = clean.get_log("t", 5).active_segment.log.path
    for log in clean.all_logs().values():              # crash: no flush, no checkpoint, no marker
        log.release_descriptors()
    torn = (0).to_bytes(8, "big") + (900).to_bytes(4, "big") + b"\x00" * 30
    with open(active, "ab") as f:
        f.write(torn)

    crashed = LogManager(tmp_path)
    crashed.load(lambda topic: CONFIG, BASE_TS, threads=4)
    assert not crashed.had_clean_shutdown
    assert crashed.load_stats.logs == 12 and crashed.load_stats.recovered_segments >= 12
    assert crashed.load_stats.truncated_bytes == len(torn)
    assert {tp: read_all(log) for tp, log in crashed.all_logs().items()} == contents
    crashed.shutdown(threads=4)


def test_a_clean_shutdown_without_new_appends_rewrites_no_producer_snapshot(tmp_path, manager):
    fill(manager.get_or_create_log("t", 0, CONFIG, BASE_TS), 3)
    manager.get_or_create_log("empty", 0, CONFIG, BASE_TS)
    manager.shutdown()
    snapshots = {p.name: p.stat().st_ino for p in tmp_path.glob("t-0/*.snapshot")}
    assert snapshots                                    # the state at the log end, written once
    assert not list(tmp_path.glob("empty-0/*.snapshot"))   # an empty log has nothing to replay

    again = LogManager(tmp_path)
    again.load(lambda topic: CONFIG, BASE_TS)
    again.shutdown()
    # write_atomically would have made a new inode: the snapshot at the end was kept as it was
    assert {p.name: p.stat().st_ino for p in tmp_path.glob("t-0/*.snapshot")} == snapshots
    assert not list(tmp_path.glob("empty-0/*.snapshot"))
