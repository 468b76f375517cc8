"""aiokafka send and consume."""
import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer


def test_aiokafka_send_and_consume(engine_cluster, topic_name):
    async def scenario():
        producer = AIOKafkaProducer(bootstrap_servers=engine_cluster.bootstrap, enable_idempotence=True)
        await producer.start()
        try:
            offsets = [(await producer.send_and_wait(topic_name, f"m{i}".encode(), partition=0)).offset
                       for i in range(20)]
        finally:
            await producer.stop()
        consumer = AIOKafkaConsumer(topic_name, bootstrap_servers=engine_cluster.bootstrap,
                                    auto_offset_reset="earliest")
        await consumer.start()
        try:
            values = []
            while len(values) < 20:
                batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 10)
                for messages in batch.values():
                    values += [m.value for m in messages]
        finally:
            await consumer.stop()
        return offsets, values

    offsets, values = asyncio.run(scenario())
    assert offsets == list(range(20))
    assert values == [f"m{i}".encode() for i in range(20)]
