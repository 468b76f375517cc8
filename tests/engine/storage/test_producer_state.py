import pytest

from engine.storage.errors import InvalidProducerEpochError, OutOfOrderSequenceError
from engine.storage.producer_state import ProducerStateManager
from engine.storage.records import read_header

from .conftest import make_batch, values

PID = 4000


def header(seq, count=1, *, epoch=0, pid=PID, base_offset=0):
    return read_header(make_batch(values(count), producer=(pid, epoch, seq)))._replace(
        base_offset=base_offset)


@pytest.fixture
def state(tmp_path):
    return ProducerStateManager(tmp_path)


def write(state, h):
    """What the log does for an accepted batch."""
    assert state.check(h) is None
    state.update(h, h.base_offset)


def test_unknown_producer_accepts_any_sequence(state):
    assert state.check(header(17)) is None


def test_sequences_must_follow_on(state):
    write(state, header(0, 3, base_offset=10))
    write(state, header(3, 2, base_offset=13))
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(6))  # 5 was skipped
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(4))  # overlaps, not a duplicate


def test_duplicates_of_the_last_five_batches_return_the_original_offset(state):
    for i in range(7):
        write(state, header(i, base_offset=100 + i))
    for i in range(2, 7):
        assert state.check(header(i)) == 100 + i
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(1))  # too old to be recognised


def test_epochs(state):
    write(state, header(0, 2, epoch=3))
    with pytest.raises(InvalidProducerEpochError):
        state.check(header(2, epoch=2))
    with pytest.raises(OutOfOrderSequenceError):
        state.check(header(2, epoch=4))  # a new epoch restarts at 0
    write(state, header(0, epoch=4, base_offset=5))
    assert state.producers[PID].epoch == 4
    with pytest.raises(InvalidProducerEpochError):
        state.check(header(0, 2, epoch=3))


def test_sequence_wraps_to_zero(state):
    write(state, header(2**31 - 2, 2))
    assert state.producers[PID].last_seq == 2**31 - 1
    write(state, header(0, base_offset=2))


def test_staged_batches_are_visible_until_aborted(state):
    state.stage(header(0, 2), 0)
    assert state.check(header(2)) is None  # follows the staged batch
    state.abort()
    assert PID not in state.producers
    state.stage(header(0, 2), 0)
    state.commit()
    assert state.producers[PID].last_seq == 1


def test_snapshot_round_trip(tmp_path, state):
    write(state, header(0, 3, base_offset=0))
    write(state, header(0, 1, pid=PID + 1, epoch=9, base_offset=3))
    state.take_snapshot(4)
    assert (tmp_path / "00000000000000000004.snapshot").exists()
    fresh = ProducerStateManager(tmp_path)
    assert fresh.load() == 4
    assert fresh.check(header(0, 3)) == 0  # still recognised as a duplicate
    assert fresh.producers[PID + 1].epoch == 9


def test_load_skips_a_corrupt_snapshot(tmp_path, state):
    write(state, header(0))
    state.take_snapshot(1)
    write(state, header(1, base_offset=1))
    state.take_snapshot(2)
    (tmp_path / "00000000000000000002.snapshot").write_bytes(b'{"version": 1, "produ')
    fresh = ProducerStateManager(tmp_path)
    assert fresh.load() == 1
    assert fresh.producers[PID].last_seq == 0
    assert fresh.snapshot_offsets() == [1]


def test_truncate_and_reload_and_delete_below(tmp_path, state):
    for offset in (5, 10, 15):
        state.update(header(offset, base_offset=offset), offset)  # replay: no checks
        state.take_snapshot(offset + 1)
    assert state.truncate_and_reload(12) == 11
    assert state.snapshot_offsets() == [6, 11]
    assert state.producers[PID].last_seq == 10
    state.delete_snapshots_below(11)
    assert state.snapshot_offsets() == [11]
    assert ProducerStateManager(tmp_path).load() == 11
    state.truncate_fully()
    assert state.snapshot_offsets() == [] and not state.producers
    assert ProducerStateManager(tmp_path).load() == 0


def test_idle_producers_expire_and_are_then_checked_like_new_ones(state):
    """producer.id.expiration.ms: the state must not keep every producer ever seen."""
    write(state, header(0, 3, pid=1))                       # last record stamped BASE_TS + 2
    write(state, header(0, 1, pid=2))                       # stamped BASE_TS
    older, newer = state.producers[2].last_timestamp, state.producers[1].last_timestamp
    assert older < newer
    assert state.remove_expired(older + 999, expiration_ms=1000) == 0
    assert state.remove_expired(older + 1000, expiration_ms=1000) == 1
    assert list(state.producers) == [1]
    assert state.remove_expired(newer + 1000, expiration_ms=1000) == 1
    assert dict(state.producers) == {}
    assert state.check(header(7, pid=1)) is None            # a forgotten producer may go on
