"""The listener, in-process: fetches go out with sendfile, and framing limits hold."""
import asyncio
import os
import threading

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition

import engine.protocol.apis  # noqa: F401 - registers the handlers
from engine.runtime import Engine
from tests.support.engine_process import free_port_range


@pytest.fixture
def in_process_engine(tmp_path):
    """An Engine on a background event loop in this process, so a test can watch its syscalls."""
    loop = asyncio.new_event_loop()
    engine = Engine(tmp_path / "data", brokers=1, port=free_port_range(2))
    ready = threading.Event()

    def run():
        asyncio.set_event_loop(loop)
        loop.run_until_complete(engine.start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    assert ready.wait(30)
    yield engine
    asyncio.run_coroutine_threadsafe(engine.stop(), loop).result(30)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_fetch_serves_segment_bytes_with_sendfile(in_process_engine, monkeypatch):
    sent = []
    real_sendfile = os.sendfile

    def counting_sendfile(out_fd, in_fd, offset, count, *args, **kwargs):
        written = real_sendfile(out_fd, in_fd, offset, count, *args, **kwargs)
        sent.append(written)
        return written

    monkeypatch.setattr(os, "sendfile", counting_sendfile)
    bootstrap = in_process_engine.bootstrap_servers
    producer = KafkaProducer(bootstrap_servers=bootstrap, linger_ms=20)
    values = [os.urandom(100) for _ in range(5000)]
    for value in values:
        producer.send("zero-copy", value, partition=0)
    producer.flush(10)
    producer.close()

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest")
    consumer.assign([TopicPartition("zero-copy", 0)])
    received = []
    for _ in range(100):
        for messages in consumer.poll(timeout_ms=200).values():
            received += [m.value for m in messages]
        if len(received) >= len(values):
            break
    consumer.close()
    assert received == values
    assert sum(sent) >= sum(len(v) for v in values)  # every record byte left through sendfile
