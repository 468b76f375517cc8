"""Transactions (KIP-98, with KIP-360, KIP-447 and KIP-890 part 1): the transaction coordinator.

    coordinator.py   TransactionCoordinator: what the transaction APIs call; one per broker
    metadata.py      one transactional id's state and its transitions
    store.py         ids of the __transaction_state partitions this broker leads: loading, writes
    records.py       the record formats of __transaction_state (Kafka's)
    markers.py       COMMIT/ABORT markers to every partition of a transaction
    channel.py       requests to other brokers (WriteTxnMarkers, verify-only AddPartitionsToTxn)
    verification.py  KIP-890 part 1: Produce asks the coordinator before a partition joins a transaction
"""
