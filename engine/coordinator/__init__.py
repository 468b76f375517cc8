"""Consumer groups and committed offsets (Kafka's group coordinator: the classic protocol
and the consumer group protocol of KIP-848).

    coordinator.py       GroupCoordinator: what the group/offset APIs call; one per broker
    membership.py        the rebalance protocol: JoinGroup, SyncGroup, Heartbeat, LeaveGroup
    group.py             a group's state (members, generation, offsets) and its rules
    consumer_protocol.py the consumer group protocol (KIP-848): ConsumerGroupHeartbeat
    consumer_group.py    a consumer-protocol group: epochs, members, target assignment
    reconciliation.py    one member's steps towards its target assignment
    assignors.py         the server-side assignors: uniform and range
    group_store.py       groups of the __consumer_offsets partitions this broker leads:
                         loading them from the log, writing their records, offset expiry
    offsets_records.py   the record formats of __consumer_offsets (Kafka's)
    transactions/        the transaction coordinator and __transaction_state (its own package)

Transactional offsets (TxnOffsetCommit) live with the group's: pending per producer id until
the transaction's marker reaches the group's __consumer_offsets partition (on_txn_marker).
"""
