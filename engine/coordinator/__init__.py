"""Consumer groups and committed offsets (Kafka's classic group coordinator).

    coordinator.py       GroupCoordinator: what the group/offset APIs call; one per broker
    membership.py        the rebalance protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup
    group.py             a group's state (members, generation, offsets) and its rules
    group_store.py       groups of the __consumer_offsets partitions this broker leads:
                         loading them from the log, writing their records, offset expiry
    offsets_records.py   the record formats of __consumer_offsets (Kafka's)
    transactions/        the transaction coordinator and __transaction_state (its own package)

Transactional offsets (TxnOffsetCommit) live with the group's: pending per producer id until
the transaction's marker reaches the group's __consumer_offsets partition (on_txn_marker).
"""
