"""The follower's side of an incremental fetch session (engine/broker/fetch_session_handler.py)."""
import kafka.errors as Errors

from engine.broker.fetch_session_handler import FetchSessionHandler, Position

A0, A1, B0 = ("a", 0), ("a", 1), ("b", 0)


def at(offset: int, epoch: int = 3) -> Position:
    return Position(fetch_offset=offset, leader_epoch=epoch, max_bytes=1 << 20, last_fetched_epoch=epoch,
                    log_start_offset=0)


def opened(session_id: int = 77) -> FetchSessionHandler:
    handler = FetchSessionHandler()
    assert handler.next_request({A0: at(5), A1: at(9)}) == (0, 0, [A0, A1], [])
    handler.answered(0, session_id)
    return handler


def test_a_full_fetch_opens_the_session_and_the_next_names_only_what_moved():
    handler = opened()
    assert handler.next_request({A0: at(5), A1: at(9)}) == (77, 1, [], [])       # nothing moved
    handler.answered(0, 77)
    # A0 took records, A1's leader epoch moved, B0 is new: all three named; nothing forgotten.
    assert handler.next_request({A0: at(8), A1: at(9, epoch=4), B0: at(0)}) == (77, 2, [A0, A1, B0], [])
    handler.answered(0, 77)
    assert handler.next_request({A0: at(8), B0: at(0)}) == (77, 3, [], [A1])     # A1 no longer followed here
    handler.answered(0, 77)
    assert handler.next_request({A0: at(8), B0: at(0)}) == (77, 4, [], [])


def test_an_answer_lost_on_the_way_names_the_moves_again():
    handler = opened()
    assert handler.next_request({A0: at(6), A1: at(9)}) == (77, 1, [A0], [])
    handler.reset()                           # the connection broke: was the request taken?
    assert handler.next_request({A0: at(6), A1: at(9)}) == (77, 0, [A0, A1], [])   # closes 77, opens anew
    handler.answered(0, 78)
    assert handler.next_request({A0: at(6), A1: at(9)}) == (78, 1, [], [])


def test_a_reset_while_a_fetch_is_in_flight_holds_when_its_answer_comes():
    handler = opened()
    assert handler.next_request({A0: at(5), A1: at(9)}) == (77, 1, [], [])
    handler.reset()                           # B0 starts following while the fetch waits on the leader
    handler.answered(0, 77)
    assert handler.next_request({A0: at(5), A1: at(9), B0: at(0)}) == (77, 0, [A0, A1, B0], [])
    # The same while the full fetch that opens a session is in flight: the next one closes it.
    fresh = FetchSessionHandler()
    fresh.next_request({A0: at(5)})
    fresh.reset()
    fresh.answered(0, 91)
    assert fresh.next_request({A0: at(5), B0: at(0)}) == (91, 0, [A0, B0], [])


def test_session_errors_start_over_with_a_full_fetch():
    handler = opened()
    handler.next_request({A0: at(5), A1: at(9)})
    handler.answered(Errors.InvalidFetchSessionEpochError.errno, 0)
    assert handler.next_request({A0: at(5), A1: at(9)}) == (77, 0, [A0, A1], [])   # closes 77 on the way
    handler.answered(0, 80)
    handler.next_request({A0: at(5), A1: at(9)})
    handler.answered(Errors.FetchSessionIdNotFoundError.errno, 0)
    assert handler.next_request({A0: at(5), A1: at(9)}) == (0, 0, [A0, A1], [])    # 80 is gone: nothing to close


def test_a_leader_without_room_leaves_the_follower_fetching_in_full():
    handler = FetchSessionHandler()
    handler.next_request({A0: at(5)})
    handler.answered(0, 0)                    # no session opened
    assert handler.next_request({A0: at(5)}) == (0, 0, [A0], [])
    assert not handler.incremental
