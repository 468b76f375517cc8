"""A private 1-broker engine for the transaction tests (its coordinator's state is deleted once,
to make a hanging transaction), whose coordinator never aborts timed-out transactions by
itself (cleanup interval of an hour), so a transaction past its timeout stays for the page."""
from __future__ import annotations

import pytest
from confluent_kafka.admin import AdminClient, NewTopic

from tests.console.conftest import engine_cluster_row
from tests.support.engine_process import EngineProcess
from tests.support.txn_clients import hanging_transaction

HANGING_TOPIC = "txn-hanging"
HANGING_ID = "lost-coordinator"
TXN_ENGINE_CONFIGS = {"transaction.state.log.num.partitions": "4",
                      "transaction.abort.timed.out.transaction.cleanup.interval.ms": "3600000"}


def create_topics(bootstrap: str, *names: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(n, partitions, 1) for n in names]).values():
        future.result(30)


@pytest.fixture(scope="module")
def txn_engine(tmp_path_factory):
    """The engine, with a hanging transaction on HANGING_TOPIC-0 (3 records from offset 1)."""
    engine = EngineProcess(tmp_path_factory.mktemp("txn") / "data", brokers=1, configs=TXN_ENGINE_CONFIGS).start()
    create_topics(engine.bootstrap, HANGING_TOPIC)
    from confluent_kafka import Producer
    plain = Producer({"bootstrap.servers": engine.bootstrap})
    plain.produce(HANGING_TOPIC, value=b"before", partition=0)
    assert plain.flush(30) == 0
    hanging_transaction(engine, HANGING_ID, [(HANGING_TOPIC, 0, b"h1"), (HANGING_TOPIC, 0, b"h2"),
                                             (HANGING_TOPIC, 0, b"h3")])
    yield engine
    engine.kill()


@pytest.fixture
def txn_cluster(db, txn_engine):
    return engine_cluster_row("txn engine", txn_engine)
