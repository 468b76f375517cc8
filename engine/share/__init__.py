"""Share groups' delivery side (KIP-932): the share partitions on the topic partitions'
leaders and the share coordinator that keeps their state durable.

    partition.py     SharePartition: a share group's view of one topic partition - its start
                     and end offsets, each in-flight record's state, delivery count and lock
    acquire.py       reading the log for acquisition: batch boundaries, control records and,
                     under read_committed, aborted transactions
    manager.py       SharePartitionManager: what ShareFetch and ShareAcknowledge call on a broker
    sessions.py      share sessions (the share variant of KIP-227's fetch sessions)
    persister.py     the client of the share coordinator: local calls or the internal APIs
    state.py         a share partition's persisted state and how changes combine into it
    state_records.py the records of `__share_group_state` (Kafka's ShareSnapshot and ShareUpdate)
    coordinator.py   ShareCoordinator: the `__share_group_state` partitions this broker leads
"""
