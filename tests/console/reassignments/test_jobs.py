"""Reassignment jobs in a real Celery worker process, on a real Redis and a real 4-broker engine."""
from __future__ import annotations

import threading
import time

import pytest
from kafka import KafkaProducer

from console.clusters.gateway import cluster_gateway
from console.clusters.services import cluster_create
from console.reassignments import services
from console.reassignments.models import Reassignment, ReassignmentMove
from tests.console.conftest import STOPPABLE_ENGINE_CONFIGS, make_topic
from tests.console.reassignments.conftest import replicas_of, throttle_configs
from tests.support.partition_io import read_values, send_values
from tests.support.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)
MB = 1024 * 1024
# A short step lease: after a kill -9 the new worker waits this long for the dead step's lease.
WORKER_ENV = {"REASSIGNMENT_POLL_SECONDS": "0.3", "REASSIGNMENT_STEP_LEASE_SECONDS": "8"}


def fill(cluster, topic: str, partition: int, megabytes: float) -> None:
    send_values(cluster.bootstrap_servers, topic, [bytes(1024) for _ in range(int(megabytes * 1024))],
                partition=partition, acks="all", linger_ms=5)


def wait_for_state(job, states, timeout=120):
    def check():
        job.refresh_from_db()
        return job.state in states
    wait_until(check, timeout=timeout, interval=0.2, message=f"job state in {states} (now {job.state})")
    return job


def in_flight_on_the_cluster(job) -> bool:
    moving = {m.key for m in job.moves.filter(state=ReassignmentMove.IN_FLIGHT)}
    if not moving:
        return False
    with cluster_gateway(job.cluster) as gw:
        return bool(moving & set(gw.reassignments.ongoing()))


class AckedProducer(threading.Thread):
    """Produces with acks=all until stopped; remembers every value the cluster acknowledged."""

    def __init__(self, bootstrap: str, topic: str, partitions: int) -> None:
        super().__init__(daemon=True)
        self.bootstrap, self.topic, self.partitions = bootstrap, topic, partitions
        self.acked: dict[int, set[bytes]] = {p: set() for p in range(partitions)}
        self.stop = threading.Event()

    def run(self) -> None:
        producer = KafkaProducer(bootstrap_servers=self.bootstrap, acks="all", retries=20, linger_ms=5,
                                 max_in_flight_requests_per_connection=1)
        n = 0
        try:
            while not self.stop.is_set():
                p = n % self.partitions
                value = f"record-{n}".encode()
                producer.send(self.topic, value, partition=p).add_callback(
                    lambda _meta, p=p, value=value: self.acked[p].add(value))
                n += 1
                time.sleep(0.005)
            producer.flush(30)
        finally:
            producer.close()


@pytest.fixture
def throttled_engine(db, engine_factory):
    """4 brokers with small replica fetches, so a throttle's overshoot per fetch is small."""
    engine = engine_factory(brokers=4, configs={**STOPPABLE_ENGINE_CONFIGS, "replica.fetch.max.bytes": "131072"})
    return cluster_create(name="throttled", bootstrap_servers=engine.bootstrap)


def test_job_under_acks_all_load_keeps_every_record_holds_the_throttle_and_ends_clean(
        throttled_engine, users, unique_topic, celery_worker_factory):
    cluster, topic = throttled_engine, unique_topic()
    make_topic(cluster, topic, assignments={0: [0, 1], 1: [1, 2], 2: [2, 0]})
    fill(cluster, topic, 0, 6)
    celery_worker_factory(extra_env=WORKER_ENV)
    job = services.plan_from_assignment(cluster=cluster, actor=users["operator"], name="onto 3",
                                        assignment={(topic, 0): (3, 0), (topic, 2): (2, 3)})
    producer = AckedProducer(cluster.bootstrap_servers, topic, 3)
    producer.start()
    services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=MB)

    # The new replica of partition 0 on broker 3, sampled until the job ends.
    samples = []
    while job.state not in Reassignment.FINISHED:
        with cluster_gateway(cluster) as gw:
            size = gw.reassignments.replica_sizes({topic: [0]}, [3]).get((topic, 0, 3))
        if size:
            samples.append((time.monotonic(), size))
        time.sleep(0.25)
        job.refresh_from_db()
        assert len(samples) < 2000, "the job never ended"
    producer.stop.set()
    producer.join(60)
    assert job.state == Reassignment.DONE, job.message

    # The copy rate, from sizes: the growth between the first and the last sample of the copy.
    copying = [(t, s) for t, s in samples if s < samples[-1][1] * 0.95]
    assert len(copying) >= 2
    (t0, s0), (t1, s1) = copying[0], copying[-1]
    rate = (s1 - s0) / (t1 - t0)
    assert rate <= 1.2 * MB, f"new replica copied at {rate / MB:.2f} MB/s under a 1 MB/s throttle"

    assert replicas_of(cluster, topic) == {0: (3, 0), 1: (1, 2), 2: (2, 3)}
    assert throttle_configs(cluster, [topic], [0, 1, 2, 3]) == {}
    with cluster_gateway(cluster) as gw:
        ends = gw.high_watermarks(gw.metadata([topic]).topic(topic).partitions)
    for p in range(3):
        consumed = set(read_values(cluster.bootstrap_servers, topic, ends[topic, p], partition=p))
        assert producer.acked[p] <= consumed, f"partition {p} lost {len(producer.acked[p] - consumed)} records"
    assert sum(len(a) for a in producer.acked.values()) > 0


def test_a_worker_killed_mid_job_is_replaced_and_the_job_completes_without_resending(
        four_brokers, users, unique_topic, celery_worker_factory):
    cluster, topic = four_brokers, unique_topic()
    make_topic(cluster, topic, assignments={p: [p % 3, (p + 1) % 3] for p in range(3)})
    for p in range(3):
        fill(cluster, topic, p, 1)
    worker = celery_worker_factory(extra_env=WORKER_ENV)
    job = services.plan_from_assignment(cluster=cluster, actor=users["operator"], name="all onto 3",
                                        assignment={(topic, p): (p % 3, 3) for p in range(3)})
    job = services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=512 * 1024,
                             per_broker_limit=1)
    wait_until(lambda: in_flight_on_the_cluster(job), timeout=60, interval=0.1, message="a move in flight")
    worker.kill()

    celery_worker_factory(extra_env=WORKER_ENV)
    job = wait_for_state(job, Reassignment.FINISHED)
    assert job.state == Reassignment.DONE, job.message
    assert replicas_of(cluster, topic) == {p: (p % 3, 3) for p in range(3)}
    assert [m.attempts for m in job.moves.all()] == [1, 1, 1]      # nothing sent twice
    assert throttle_configs(cluster, [topic], [0, 1, 2, 3]) == {}


def test_cancel_mid_job_puts_the_old_replicas_back_and_removes_every_throttle(
        four_brokers, users, unique_topic, celery_worker_factory):
    cluster, topic = four_brokers, unique_topic()
    make_topic(cluster, topic, assignments={0: [0, 1], 1: [1, 2]})
    fill(cluster, topic, 0, 2)
    fill(cluster, topic, 1, 2)
    celery_worker_factory(extra_env=WORKER_ENV)
    job = services.plan_from_assignment(cluster=cluster, actor=users["operator"], name="to cancel",
                                        assignment={(topic, 0): (0, 3), (topic, 1): (1, 3)})
    job = services.job_start(job=job, actor=users["operator"], throttle_bytes_per_sec=128 * 1024,
                             per_broker_limit=1)
    wait_until(lambda: in_flight_on_the_cluster(job), timeout=60, interval=0.1, message="a move in flight")
    services.job_cancel(job=job, actor=users["operator"])

    job = wait_for_state(job, Reassignment.FINISHED)
    assert job.state == Reassignment.CANCELLED, job.message
    assert replicas_of(cluster, topic) == {0: (0, 1), 1: (1, 2)}
    assert {m.state for m in job.moves.all()} == {ReassignmentMove.CANCELLED}
    assert throttle_configs(cluster, [topic], [0, 1, 2, 3]) == {}
    with cluster_gateway(cluster) as gw:
        assert gw.reassignments.ongoing() == {}
    assert not job.locks.exists()
