"""`_schemas` over the Kafka protocol: create it, read it into the Store, write to it.

The topic has one partition (a total order of every change) and `cleanup.policy=compact`;
it is created at start when missing, with replication factor min(3, brokers), as
Confluent's `kafkastore.topic.replication.factor` (3) asks, and refused if it has more than
one partition (Confluent refuses it too: the order of changes would be lost).

The reader is one consumer task (aiokafka, no group, from the beginning) that applies every
record to the Store and wakes whoever waits for an offset. A write is produced with
acks=all and answered only once the reader has applied it, so a reader of this instance
sees its own write; `catch_up()` waits until the reader reached the partition's current
end, which the primary does before each write, so that it never decides on stale state
(an id already taken by a record it has not read, a version number in use). The end is asked
on a connection of its own: a broker answers a connection's requests in order, so on the
reader's it would wait behind the reader's long-polling fetch (up to 500 ms per write).
"""
from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import KafkaError, TopicAlreadyExistsError

from engine.schema_registry import records
from engine.schema_registry.store import Store

log = logging.getLogger(__name__)


@dataclass
class KafkaSettings:
    bootstrap: str
    topic: str = "_schemas"
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)

    def client_kwargs(self) -> dict:
        kwargs: dict = {"bootstrap_servers": self.bootstrap, "security_protocol": self.security_protocol}
        if self.sasl_mechanism:
            kwargs.update(sasl_mechanism=self.sasl_mechanism, sasl_plain_username=self.sasl_username,
                          sasl_plain_password=self.sasl_password)
        return kwargs


class TopicError(RuntimeError):
    """`_schemas` cannot serve as the registry's store (e.g. it has several partitions)."""


class KafkaStore:
    def __init__(self, settings: KafkaSettings, store: Store) -> None:
        self.settings = settings
        self.store = store
        self.partition = TopicPartition(settings.topic, 0)
        self._consumer: AIOKafkaConsumer | None = None
        self._offsets: AIOKafkaConsumer | None = None      # ListOffsets only, never fetches
        self._producer: AIOKafkaProducer | None = None
        self._reader: asyncio.Task | None = None
        self._progress = asyncio.Condition()
        self.position = 0      # the next offset the reader fetches: everything below it is applied

    async def start(self) -> None:
        await self._ensure_topic()
        self._consumer = AIOKafkaConsumer(client_id="schema-registry-reader", enable_auto_commit=False,
                                          auto_offset_reset="earliest", **self.settings.client_kwargs())
        await self._consumer.start()
        self._consumer.assign([self.partition])
        await self._consumer.seek_to_beginning(self.partition)
        self._offsets = AIOKafkaConsumer(client_id="schema-registry-offsets", enable_auto_commit=False,
                                         **self.settings.client_kwargs())
        await self._offsets.start()
        self._producer = AIOKafkaProducer(client_id="schema-registry-writer", acks="all", linger_ms=0,
                                          **self.settings.client_kwargs())
        await self._producer.start()
        self._reader = asyncio.create_task(self._read_forever(), name="schemas-reader")

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        for client in (self._consumer, self._offsets, self._producer):
            if client is not None:
                await client.stop()

    async def _ensure_topic(self) -> None:
        admin = AIOKafkaAdminClient(client_id="schema-registry-admin", **self.settings.client_kwargs())
        try:
            await admin.start()
            cluster = await admin.describe_cluster()
            replicas = min(3, len(cluster["brokers"]) or 1)
            topic = NewTopic(self.settings.topic, 1, replicas, topic_configs={"cleanup.policy": "compact"})
            try:
                response = await admin.create_topics([topic])
                for name, code, *_ in response.topic_errors:
                    if code not in (0, TopicAlreadyExistsError.errno):
                        raise TopicError(f"cannot create {name}: Kafka error {code}")
                    if code == 0:
                        log.info("Created %s (1 partition, %d replicas, compacted)", name, replicas)
            except TopicAlreadyExistsError:
                pass
            described = await admin.describe_topics([self.settings.topic])
            partitions = described[0]["partitions"] if described else []
            if len(partitions) != 1:
                raise TopicError(f"{self.settings.topic} has {len(partitions)} partitions; the registry needs "
                                 "exactly one, so that every change keeps its order")
        finally:
            await admin.close()

    async def _read_forever(self) -> None:
        assert self._consumer is not None
        while True:
            try:
                batches = await self._consumer.getmany(self.partition, timeout_ms=500)
            except KafkaError as exc:
                log.warning("Reading %s failed, retrying: %s", self.settings.topic, exc)
                await asyncio.sleep(0.5)
                continue
            for message in batches.get(self.partition, []):
                try:
                    record = records.decode(message.offset, message.key, message.value)
                except records.UnreadableRecord as exc:
                    self.store.skipped += 1
                    self.store.offset = message.offset
                    log.warning("Skipped a _schemas record: %s", exc)
                    continue
                self.store.apply(record)
            # The position passes compacted gaps and transaction markers too, which no message shows.
            position = await self._consumer.position(self.partition)
            if position != self.position:
                self.position = position
                async with self._progress:
                    self._progress.notify_all()

    async def end_offset(self) -> int:
        assert self._offsets is not None
        ends = await self._offsets.end_offsets([self.partition])
        return ends[self.partition]

    async def wait_for(self, offset: int, timeout: float) -> None:
        """Until the reader applied `offset` (TimeoutError after `timeout` seconds)."""
        async def reached() -> None:
            async with self._progress:
                await self._progress.wait_for(lambda: self.position > offset)
        await asyncio.wait_for(reached(), timeout)

    async def catch_up(self, timeout: float) -> None:
        """Until the reader applied everything written to the partition before this call."""
        end = await self.end_offset()
        await self.wait_for(end - 1, timeout)

    async def write(self, key: bytes, value: bytes | None, timeout: float) -> int:
        """Produce one record (acks=all), wait until it is applied here, return its offset."""
        assert self._producer is not None
        metadata = await asyncio.wait_for(
            self._producer.send_and_wait(self.settings.topic, key=key, value=value, partition=0), timeout)
        await self.wait_for(metadata.offset, timeout)
        return metadata.offset
