"""The page's hanging rule on its own (the pages' tests run it against a real engine)."""
from console.kafka_gateway.transactions import ActiveProducer, PartitionProducers, TransactionDescription
from console.transactions.selectors import (
    NOT_IN_COORDINATOR,
    NOT_IN_TRANSACTION,
    PAST_TIMEOUT,
    TransactionRow,
    _reason,
    _Unsure,
)

OPEN = ActiveProducer(producer_id=7, producer_epoch=0, last_sequence=2, last_timestamp=0, coordinator_epoch=-1,
                      current_txn_start_offset=10)
PARTITION = PartitionProducers("t", 0, leader=1, producers=(OPEN,))


def row(state="Ongoing", partitions=(("t", 0),), hanging=False, error=None) -> TransactionRow:
    return TransactionRow(TransactionDescription("id", 1, state, 7, 0, 60000, 0, partitions, error=error), age_ms=5,
                          hanging=hanging)


def test_hanging_needs_a_coordinator_that_will_not_write_the_marker():
    assert _reason(PARTITION, OPEN, {}) == NOT_IN_COORDINATOR
    assert _reason(PARTITION, OPEN, {7: row()}) is None
    assert _reason(PARTITION, OPEN, {7: row(partitions=(("t", 1),))}) == NOT_IN_TRANSACTION
    assert _reason(PARTITION, OPEN, {7: row(state="CompleteCommit", partitions=())}) == NOT_IN_TRANSACTION
    assert _reason(PARTITION, OPEN, {7: row(hanging=True)}) == PAST_TIMEOUT


def test_nothing_is_flagged_on_a_guess():
    # A coordinator that could not describe the id, or a broker that did not list its ids.
    assert _reason(PARTITION, OPEN, {7: row(error="COORDINATOR_LOAD_IN_PROGRESS")}) is None
    assert _reason(PARTITION, OPEN, _Unsure({})) is None
