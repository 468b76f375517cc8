"""Alerts end to end with real parts: Celery beat and a worker on a real Redis evaluate a rule
about a real consumer group that lags and then catches up; a real webhook receiver gets each
notification once, through a worker killed with -9 mid-send and through a receiver outage."""
from __future__ import annotations

import pytest
from kafka import KafkaConsumer

from console.alerts.models import Alert, AlertRule, Notification, Receiver
from tests.console.alerts.conftest import make_rule
from tests.console.conftest import make_topic
from tests.console.groups.conftest import commit
from tests.support.celery_worker import CeleryBeat
from tests.support.partition_io import send_values
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(300)]

# Rounds every 2 s, a sweep every second, short backoffs and leases; the analytics schedules
# that share beat are pushed out of the test's way.
ENV = {"ALERTS_EVALUATION_SECONDS": "2", "ALERTS_DELIVERY_SWEEP_SECONDS": "1", "ALERTS_DELIVERY_RETRY_SECONDS": "1",
       "ALERTS_DELIVERY_MAX_RETRY_SECONDS": "2", "ALERTS_DELIVERY_LEASE_SECONDS": "4",
       "ALERTS_DELIVERY_TIMEOUT_SECONDS": "3", "SNAPSHOT_SECONDS": "86400", "ANALYTICS_RUN_SECONDS": "86400",
       "ANALYTICS_RECORDS_SECONDS": "86400"}


@pytest.fixture
def beat(redis_server, tmp_path, celery_worker_factory):
    # celery_worker_factory first: it points this process's Celery app at the test's Redis.
    started = CeleryBeat(broker_url=redis_server.url, log_path=tmp_path / "beat.log", extra_env=ENV).start()
    yield started
    started.stop()


def alerts_worker(factory):
    """The alerts queue's worker as `make run` has it (one process, solo), on the default queue too."""
    return factory(queues=("celery", "alerts"), pool="solo", concurrency=1, extra_env=ENV)


def messages(webhook, status: str) -> list[dict]:
    return [b for b in webhook.bodies() if b["status"] == status]


def test_a_lagging_consumer_group_fires_then_resolves(cluster, unique_topic, webhook, celery_worker_factory, beat):
    topic = make_topic(cluster, unique_topic())
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 30)
    group = f"{topic}-consumers"
    consumer = KafkaConsumer(topic, bootstrap_servers=cluster.bootstrap_servers, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, max_poll_records=5)
    try:
        read = []
        wait_until(lambda: read.extend(r for rs in consumer.poll(500).values() for r in rs) or read, timeout=60,
                   message="the consumer's first records")
        consumer.commit()                                 # a few of 30 read: lag 25 or so, a member in the group
        lag = 30 - len(read)
        hook = Receiver.objects.create(name="hook", kind=Receiver.WEBHOOK, url=f"{webhook.url}/generic")
        make_rule(cluster, name="consumers behind", kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT,
                  target=group, threshold=10, receivers=[hook])
        worker = alerts_worker(celery_worker_factory)
        wait_until(lambda: messages(webhook, "firing"), timeout=90, interval=0.2,
                   message=f"the firing webhook\n{worker.log_text()}")
        [fired] = messages(webhook, "firing")
        assert (fired["subject"], fired["value"]) == (group, float(lag))

        while len(read) < 30:                             # the consumer catches up and commits
            read.extend(r for rs in consumer.poll(500).values() for r in rs)
        consumer.commit()
        wait_until(lambda: messages(webhook, "resolved"), timeout=90, interval=0.2,
                   message=f"the resolved webhook\n{worker.log_text()}")
    finally:
        consumer.close()
    assert len(webhook.requests) == 2                      # once per change, nothing repeated
    alert = Alert.objects.get(rule__name="consumers behind")
    assert (alert.state, alert.open) == (Alert.RESOLVED, False)
    assert list(Notification.objects.values_list("state", flat=True)) == [Notification.SENT] * 2


def test_a_worker_killed_mid_send_and_a_receiver_outage_lose_nothing(cluster, unique_topic, webhook,
                                                                    celery_worker_factory, beat):
    topic = make_topic(cluster, unique_topic())
    send_values(cluster.bootstrap_servers, topic, [b"v"] * 10)
    group = f"{topic}-stuck"
    commit(cluster, group, {(topic, 0): 2})
    hook = Receiver.objects.create(name="hook", kind=Receiver.WEBHOOK, url=f"{webhook.url}/generic")
    make_rule(cluster, name="stuck", kind=AlertRule.GROUP_LAG, target_type=AlertRule.EXACT, target=group,
              threshold=5, receivers=[hook])
    webhook.hold()                                         # the firing message arrives, and waits for its answer
    first = alerts_worker(celery_worker_factory)
    assert webhook.wait_holding(90), first.log_text()
    first.kill()                                           # kill -9 while the POST waits for its answer
    webhook.release()
    [notification] = Notification.objects.all()
    assert notification.state == Notification.SENDING      # the dead worker's claim
    second = alerts_worker(celery_worker_factory)

    def sent(n=notification):
        n.refresh_from_db()
        return n.state == Notification.SENT
    wait_until(sent, timeout=90, interval=0.2, message=f"the re-send after the lease\n{second.log_text()}")
    assert notification.attempts == 2
    keys = [r["key"] for r in webhook.requests]
    assert keys == [str(notification.delivery_key)] * 2    # the re-send carries the same key ...
    assert len(messages(webhook, "firing")) == 1           # ... so the receiver takes it once

    webhook.stop()                                         # an outage, then the group catches up
    commit(cluster, group, {(topic, 0): 10})

    def retried():
        resolved = Notification.objects.filter(event__kind="resolved").first()
        return resolved is not None and resolved.attempts >= 2 and resolved
    resolved = wait_until(retried, timeout=90, interval=0.2, message="retries while the receiver is down")
    assert resolved.last_error.startswith("the receiver could not be reached")
    webhook.start()
    wait_until(lambda: messages(webhook, "resolved"), timeout=90, interval=0.2,
               message=f"the resolved webhook after the outage\n{second.log_text()}")
    assert len(messages(webhook, "resolved")) == 1 and len(messages(webhook, "firing")) == 1
