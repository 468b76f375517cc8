"""Console fixtures: cluster rows pointing at real engines, users in each role, logged-in clients."""
from __future__ import annotations

import itertools
import os
import re

import pytest
from django.test import Client

from console.accounts.services import user_create
from console.clusters.gateway import cluster_gateway
from console.clusters.services import cluster_create
from console.events import console_event
from tests.conftest import TEST_ADMIN_TOKEN_ENV
from tests.support.celery_worker import CeleryWorker, celery_broker
from tests.support.redis_server import RedisServer
from tests.support.waiting import wait_until


# Private engines for tests that stop brokers: no automatic leader rebalance, so leaders
# stay where a stop put them until the test runs a preferred replica election itself.
STOPPABLE_ENGINE_CONFIGS = {"auto.leader.rebalance.enable": "false"}
_names = itertools.count()


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # The default PBKDF2 costs ~0.3 s per user: too slow for three users in every view test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def engine_cluster_row(name: str, engine):
    """A cluster row for a test engine, every broker in its bootstrap list, naming the run's
    engine admin token by its CONSOLE_SECRET_ variable as an operator would (tests/conftest.py)."""
    return cluster_create(name=name, bootstrap_servers=engine.bootstrap, admin_token_env=TEST_ADMIN_TOKEN_ENV)


@pytest.fixture
def cluster(db, engine_cluster):
    """A cluster row for the shared 3-broker engine."""
    return engine_cluster_row("shared engine", engine_cluster)


@pytest.fixture
def private_cluster(db, engine_factory):
    """A fresh 3-broker engine of the test's own, with its cluster row: for stopping brokers."""
    engine = engine_factory(brokers=3, configs=STOPPABLE_ENGINE_CONFIGS)
    return engine_cluster_row("private engine", engine)


@pytest.fixture
def unique_topic(request):
    """Topic names unique to the test (and to each call within it)."""
    base = "c-" + re.sub(r"[^a-zA-Z0-9.-]", "-", request.node.name)[:180]

    def make(suffix: str = "") -> str:
        return f"{base}{'-' + suffix if suffix else ''}-{next(_names)}"
    return make


def make_topic(cluster, name: str, *, assignments: dict[int, list[int]] | None = None, partitions: int = 1,
               replication_factor: int = 1, configs: dict | None = None) -> str:
    """Create a topic straight through the gateway (tests set up state; services are tested on their own)."""
    with cluster_gateway(cluster) as gw:
        gw.create_topic(name=name, num_partitions=partitions, replication_factor=replication_factor,
                        configs=configs, assignments=assignments)
    return name


def wait_for_partitions(cluster, topic: str, condition, message: str):
    """Poll the topic's metadata until `condition(partitions)` holds (ISR changes are asynchronous)."""
    def check():
        with cluster_gateway(cluster) as gw:
            info = gw.metadata([topic]).topic(topic)
        return info is not None and condition(info.partitions) and info.partitions
    return wait_until(check, timeout=30, message=message)


@pytest.fixture
def users(db):
    return {role: user_create(username=role, password=f"{role}-password", role=role)
            for role in ("viewer", "operator", "admin")}


@pytest.fixture
def events():
    """Console events received after commit, as (event, payload)."""
    received = []

    def receiver(sender, event, payload, **kwargs):
        received.append((event, payload))
    console_event.connect(receiver)
    yield received
    console_event.disconnect(receiver)


def _client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def viewer_client(users):
    return _client_for(users["viewer"])


@pytest.fixture
def operator_client(users):
    return _client_for(users["operator"])


@pytest.fixture
def console_admin_client(users):
    return _client_for(users["admin"])


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory):
    """One real Redis for the session: the channel layer tests, and Celery's broker and result backend."""
    redis = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield redis
    redis.stop()


@pytest.fixture
def celery_worker_factory(redis_server, tmp_path):
    """`make(**kwargs)` -> a started `CeleryWorker` (tests/support/celery_worker.py) on the session's
    Redis; this process's Celery app sends there during the test. Every worker is stopped after.
    Tests need `pytest.mark.django_db(transaction=True, serialized_rollback=True)`."""
    started: list[CeleryWorker] = []

    def make(**kwargs) -> CeleryWorker:
        kwargs.setdefault("log_path", tmp_path / f"worker{len(started)}.log")
        worker = CeleryWorker(broker_url=redis_server.url, **kwargs)
        started.append(worker)
        return worker.start()

    with celery_broker(redis_server.url):
        yield make
        for worker in started:
            worker.stop()


@pytest.fixture
def poisoned_cluster(db, poisoned_engine):
    return engine_cluster_row("poisoned engine", poisoned_engine.engine)
