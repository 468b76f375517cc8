from engine.storage.leader_epoch_cache import LeaderEpochFileCache


def test_assign_ignores_old_epochs_and_survives_reload(tmp_path):
    cache = LeaderEpochFileCache(tmp_path)
    cache.assign(0, 0)
    cache.assign(2, 100)
    cache.assign(1, 50)      # older than the latest: ignored
    cache.assign(2, 120)     # same epoch: the first start offset stands
    assert cache.entries == [(0, 0), (2, 100)]
    assert LeaderEpochFileCache(tmp_path).entries == [(0, 0), (2, 100)]
    assert (tmp_path / "leader-epoch-checkpoint").read_text() == "0\n2\n0 0\n2 100\n"


def test_end_offset_for_epochs(tmp_path):
    cache = LeaderEpochFileCache(tmp_path)
    assert cache.end_offset_for(0, 10) == (-1, -1)
    cache.assign(1, 0)
    cache.assign(3, 40)
    cache.assign(5, 90)
    assert cache.end_offset_for(5, 120) == (5, 120)   # latest epoch: the log end
    assert cache.end_offset_for(7, 120) == (5, 120)
    assert cache.end_offset_for(3, 120) == (3, 90)    # ends where epoch 5 began
    assert cache.end_offset_for(4, 120) == (3, 90)    # epoch 4 never led: answer the one before
    assert cache.end_offset_for(1, 120) == (1, 40)
    assert cache.end_offset_for(0, 120) == (-1, -1)   # before the first known epoch


def test_truncation_from_both_ends(tmp_path):
    cache = LeaderEpochFileCache(tmp_path)
    for epoch, offset in [(0, 0), (1, 10), (2, 20), (3, 30)]:
        cache.assign(epoch, offset)
    cache.truncate_from_end(20)
    assert cache.entries == [(0, 0), (1, 10)]
    cache.truncate_from_start(15)
    assert cache.entries == [(1, 15)]
    assert LeaderEpochFileCache(tmp_path).entries == [(1, 15)]


def test_log_keeps_its_epoch_cache_through_appends_and_truncation(tmp_path):
    from engine.storage.log import Log
    from engine.storage.log_config import LogConfig
    from tests.engine.storage.conftest import make_batch

    log = Log.open(tmp_path / "t-0", LogConfig(), now_ms=0)
    log.append(make_batch([b"a", b"b"]), leader_epoch=0, now_ms=0)
    log.append(make_batch([b"c"]), leader_epoch=2, now_ms=0)
    log.append(make_batch([b"d"]), leader_epoch=2, now_ms=0)
    assert log.leader_epoch_cache.entries == [(0, 0), (2, 2)]
    assert log.leader_epoch_cache.end_offset_for(0, log.log_end_offset) == (0, 2)
    log.truncate_to(2)
    assert log.leader_epoch_cache.entries == [(0, 0)]
    log.close()
    assert Log.open(tmp_path / "t-0", LogConfig(), now_ms=0).leader_epoch_cache.entries == [(0, 0)]
