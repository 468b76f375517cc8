"""Exactly-once consume-transform-produce with aiokafka's transactional producer
(`producer.transaction()`, `send_offsets_to_transaction`) and a read_committed consumer:
with a transaction aborted half-way (its output never shows, its input is redone), and with
the engine killed with SIGKILL and restarted mid-transaction."""
from __future__ import annotations

import asyncio
import random

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.structs import TopicPartition

from tests.support.eos import duplicates_and_missing, read_committed
from tests.support.groups import create_topic
from tests.support.transactions import TXN_TEST_CONFIGS

RECORDS = 20_000
PARTITIONS = 3


async def _pipeline(bootstrap: str) -> tuple[int, int]:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id="aio-eos", linger_ms=20,
                                max_batch_size=1 << 20)
    consumer = AIOKafkaConsumer("aio-in", bootstrap_servers=bootstrap, group_id="aio-group",
                                isolation_level="read_committed", auto_offset_reset="earliest",
                                enable_auto_commit=False, max_poll_records=4000)
    await producer.start()
    await consumer.start()
    done, aborted = 0, 0
    try:
        while done < RECORDS:
            batch = await consumer.getmany(timeout_ms=500)
            if not batch:
                continue
            abort_this_one = aborted == 0 and done >= RECORDS // 2
            try:
                async with producer.transaction():
                    for tp, messages in batch.items():
                        for m in messages:
                            await producer.send("aio-out", key=m.key, value=m.value)
                    offsets = {tp: messages[-1].offset + 1 for tp, messages in batch.items()}
                    await producer.send_offsets_to_transaction(offsets, "aio-group")
                    if abort_this_one:
                        raise RuntimeError("abort this transaction")
            except RuntimeError:
                aborted += 1
                for tp in batch:                                # redo from the committed offsets
                    committed = await consumer.committed(tp)
                    consumer.seek(tp, committed if committed is not None else 0)
                continue
            done += sum(len(messages) for messages in batch.values())
    finally:
        await consumer.stop()
        await producer.stop()
    return done, aborted


async def _produce_input(bootstrap: str, topic: str = "aio-in") -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, linger_ms=20, max_batch_size=1 << 20)
    await producer.start()
    try:
        for i in range(0, RECORDS, 1000):
            futures = [await producer.send(topic, key=b"%d" % (j % 97), value=b"%d" % j)
                       for j in range(i, i + 1000)]
            await asyncio.gather(*futures)
    finally:
        await producer.stop()


def test_aiokafka_exactly_once_pipeline(txn_cluster):
    create_topic(txn_cluster.bootstrap, "aio-in", PARTITIONS, replication=3)
    create_topic(txn_cluster.bootstrap, "aio-out", PARTITIONS, replication=3)
    asyncio.run(_produce_input(txn_cluster.bootstrap))
    done, aborted = asyncio.run(_pipeline(txn_cluster.bootstrap))
    assert (done, aborted) == (RECORDS, 1)
    values = read_committed(txn_cluster.bootstrap, "aio-out", PARTITIONS)
    duplicated, missing = duplicates_and_missing(values, {b"%d" % i for i in range(RECORDS)})
    assert (len(values), len(duplicated), missing) == (RECORDS, 0, 0)

    async def committed() -> list[int]:
        consumer = AIOKafkaConsumer(bootstrap_servers=txn_cluster.bootstrap, group_id="aio-group")
        await consumer.start()
        try:
            tps = [TopicPartition("aio-in", p) for p in range(PARTITIONS)]
            ends = await consumer.end_offsets(tps)
            return [await consumer.committed(tp) for tp in tps], [ends[tp] for tp in tps]
        finally:
            await consumer.stop()
    offsets, ends = asyncio.run(committed())
    assert offsets == ends and sum(ends) == RECORDS


async def _resilient_pipeline(engine, kill_at: int) -> tuple[int, int, int]:
    """The pipeline again, while the engine is killed with SIGKILL and restarted once, half-way
    through a transaction: a failed transaction is aborted (or its producer replaced, which
    fences it) and the batch redone from the committed offsets."""
    bootstrap = engine.bootstrap

    async def new_producer() -> AIOKafkaProducer:
        while True:
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id="aio-eos-kill", linger_ms=20,
                                        max_batch_size=1 << 20, request_timeout_ms=10000)
            try:
                await producer.start()
                return producer
            except Exception:  # noqa: BLE001 - the engine is restarting: try again
                await producer.stop()
                await asyncio.sleep(0.5)

    async def rewind(consumer, partitions) -> None:
        for tp in partitions:
            while True:
                try:
                    committed = await consumer.committed(tp)
                    break
                except Exception:  # noqa: BLE001 - the engine is restarting
                    await asyncio.sleep(0.5)
            consumer.seek(tp, committed if committed is not None else 0)

    producer = await new_producer()
    consumer = AIOKafkaConsumer("aio-kill-in", bootstrap_servers=bootstrap, group_id="aio-kill-group",
                                isolation_level="read_committed", auto_offset_reset="earliest",
                                enable_auto_commit=False, max_poll_records=2000)
    await consumer.start()
    done, failures, crash = 0, 0, None
    progress = {}

    def kill_and_restart() -> None:
        engine.kill()
        progress["at_kill"] = done            # what the pipeline had committed when the engine died
        engine.start()

    try:
        while done < RECORDS:
            batch = await consumer.getmany(timeout_ms=500)
            if not batch:
                continue
            if crash is None and done >= kill_at:    # the crash lands inside this transaction
                crash = asyncio.ensure_future(asyncio.to_thread(kill_and_restart))
            try:
                async with producer.transaction():
                    for messages in batch.values():
                        for m in messages:
                            await producer.send("aio-kill-out", key=m.key, value=m.value)
                    await producer.send_offsets_to_transaction(
                        {tp: messages[-1].offset + 1 for tp, messages in batch.items()}, "aio-kill-group")
            except Exception:  # noqa: BLE001 - any failure: the transaction did not commit
                failures += 1
                await producer.stop()
                producer = await new_producer()          # fences the old one, aborting its transaction
                await rewind(consumer, batch)
                continue
            done += sum(len(messages) for messages in batch.values())
        if crash is not None:
            await crash
    finally:
        await consumer.stop()
        await producer.stop()
    return done, failures, progress["at_kill"]


def test_aiokafka_exactly_once_survives_kill_9(engine_factory):
    engine = engine_factory(brokers=3, configs=TXN_TEST_CONFIGS)
    create_topic(engine.bootstrap, "aio-kill-in", PARTITIONS, replication=3)
    create_topic(engine.bootstrap, "aio-kill-out", PARTITIONS, replication=3)
    asyncio.run(_produce_input(engine.bootstrap, "aio-kill-in"))
    kill_at = random.randrange(RECORDS // 5, RECORDS * 4 // 5)
    done, failures, at_kill = asyncio.run(asyncio.wait_for(_resilient_pipeline(engine, kill_at), 240))
    print(f"kill at {kill_at}: engine killed with {at_kill} records done, {failures} failed transactions")
    assert at_kill < done == RECORDS, f"kill at {kill_at}"
    values = read_committed(engine.bootstrap, "aio-kill-out", PARTITIONS)
    duplicated, missing = duplicates_and_missing(values, {b"%d" % i for i in range(RECORDS)})
    assert (len(values), len(duplicated), missing) == (RECORDS, 0, 0), f"kill at {kill_at}, {failures} failures"
