"""The live overview socket, through the real ASGI stack (auth middleware, routing) and a real engine.

The feeds render on threads of their own, as in production, so the rows these tests create
must be committed: the tests run with transactional databases."""
from __future__ import annotations

import re

import pytest

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.asgi import application
from console.clusters.live import OVERVIEW
from console.clusters.gateway import cluster_gateway
from console.topics.services import topic_create

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

# Bounds for a hung engine or consumer, not performance thresholds.
FIRST_RENDER = 30
CHANGE = 60


def figure(html: str, name: str) -> int:
    return int(re.search(rf'id="ov-{name}"[^>]*>(\d+)<', html).group(1))


def communicator_for(cluster, user=None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")]
    if user is not None:
        client = Client()
        client.force_login(user)
        headers.append((b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode()))
    return WebsocketCommunicator(application, f"/ws/clusters/{cluster.pk}/overview/", headers=headers)


async def receive_until(communicator, condition, what: str) -> str:
    """Messages come only when the render changed; read them until one satisfies `condition`."""
    while True:
        try:
            html = await communicator.receive_from(timeout=CHANGE)
        except TimeoutError:
            raise AssertionError(f"the socket sent nothing new while waiting for {what}") from None
        if condition(html):
            return html


def test_an_authenticated_viewer_receives_the_overview(cluster, users):
    communicator = communicator_for(cluster, users["viewer"])

    async def scenario():
        connected, _ = await communicator.connect(timeout=FIRST_RENDER)
        assert connected
        html = await communicator.receive_from(timeout=FIRST_RENDER)
        await communicator.disconnect()
        return html
    html = async_to_sync(scenario)()
    assert (figure(html, "brokers-up"), figure(html, "brokers-down")) == (3, 0)
    assert html.count("<tr data-broker=") == 3 and 'data-up="false"' not in html


def test_an_anonymous_connection_is_refused(cluster):
    communicator = communicator_for(cluster)

    async def scenario():
        connected, _ = await communicator.connect(timeout=FIRST_RENDER)
        await communicator.disconnect()
        return connected
    assert async_to_sync(scenario)() is False


def test_a_broker_stopped_behind_the_consoles_back_shows_up_without_a_reconnect(private_cluster, users, settings):
    """No console event here (the engine's admin interface is called directly): polling finds it."""
    settings.LIVE_POLL_SECONDS = 0.2

    def stop_broker_2():
        with cluster_gateway(private_cluster) as gw:
            gw.engine_broker_command(gw.engine_admin_endpoint(via_broker=0), 2, "stop")

    communicator = communicator_for(private_cluster, users["viewer"])

    async def scenario():
        assert (await communicator.connect(timeout=FIRST_RENDER))[0]
        before = await communicator.receive_from(timeout=FIRST_RENDER)
        await database_sync_to_async(stop_broker_2)()
        after = await receive_until(communicator, lambda h: figure(h, "brokers-down") == 1, "broker 2 down")
        await communicator.disconnect()
        return before, after
    before, after = async_to_sync(scenario)()
    assert (figure(before, "brokers-up"), figure(before, "brokers-down")) == (3, 0)
    assert figure(after, "brokers-up") == 2
    assert re.search(r'<tr data-broker="2" data-up="false" data-state="stopped">', after)


def test_a_console_event_rerenders_at_once_without_waiting_for_the_poll(
        private_cluster, users, settings, unique_topic, django_capture_on_commit_callbacks):
    """With polling effectively off, only the topic.created event can bring the new count."""
    settings.LIVE_POLL_SECONDS = 3600

    def create_topic():
        # The test runs inside a transaction: run the on-commit callbacks (the event) as a commit would.
        with django_capture_on_commit_callbacks(execute=True):
            topic_create(cluster=private_cluster, actor=users["operator"], name=unique_topic(), partitions=3,
                         replication_factor=2)

    communicator = communicator_for(private_cluster, users["operator"])

    async def scenario():
        assert (await communicator.connect(timeout=FIRST_RENDER))[0]
        before = await communicator.receive_from(timeout=FIRST_RENDER)
        await database_sync_to_async(create_topic)()
        after = await receive_until(communicator, lambda h: figure(h, "topics") > figure(before, "topics"),
                                    "the new topic")
        await communicator.disconnect()
        return before, after
    before, after = async_to_sync(scenario)()
    assert figure(after, "topics") == figure(before, "topics") + 1
    assert figure(after, "partitions") == figure(before, "partitions") + 3


def test_sockets_watching_one_cluster_share_one_feed(cluster, users):
    from console.live import ClusterFeed

    first, second = communicator_for(cluster, users["viewer"]), communicator_for(cluster, users["operator"])

    async def scenario():
        assert (await first.connect(timeout=FIRST_RENDER))[0]
        html_first = await first.receive_from(timeout=FIRST_RENDER)
        assert (await second.connect(timeout=FIRST_RENDER))[0]
        html_second = await second.receive_from(timeout=FIRST_RENDER)   # the feed's last render, at once
        watched = ClusterFeed.watched()
        await first.disconnect()
        after_one_left = ClusterFeed.watched()
        await second.disconnect()
        return html_first, html_second, watched, after_one_left, ClusterFeed.watched()
    html_first, html_second, watched, after_one_left, after_all_left = async_to_sync(scenario)()
    assert html_first == html_second
    assert watched[cluster.pk] == 2
    assert after_one_left[cluster.pk] == 1
    assert cluster.pk not in after_all_left      # the last socket stops the feed


def test_a_hanging_cluster_does_not_hold_up_another_clusters_sockets(cluster, engine_cluster, users, settings):
    """The hanging cluster's render is blocked in its bootstrap until the test opens the gate;
    the other cluster's first render must arrive meanwhile, so feeds do not share a thread."""
    from console.clusters.services import cluster_create
    from tests.support.gated_proxy import GatedProxy

    settings.KAFKA_BOOTSTRAP_TIMEOUT_MS = settings.KAFKA_REQUEST_TIMEOUT_MS = 120_000
    proxy = GatedProxy(engine_cluster.ports[0])
    hanging = cluster_create(name="hanging", bootstrap_servers=f"127.0.0.1:{proxy.port}")
    stuck, healthy = communicator_for(hanging, users["viewer"]), communicator_for(cluster, users["viewer"])

    async def scenario():
        assert (await stuck.connect(timeout=FIRST_RENDER))[0]
        assert (await healthy.connect(timeout=FIRST_RENDER))[0]
        healthy_html = await healthy.receive_from(timeout=FIRST_RENDER)
        stuck_was_silent = await stuck.receive_nothing(timeout=0.1)
        proxy.open()
        stuck_html = await stuck.receive_from(timeout=FIRST_RENDER)
        await stuck.disconnect()
        await healthy.disconnect()
        return healthy_html, stuck_was_silent, stuck_html
    try:
        healthy_html, stuck_was_silent, stuck_html = async_to_sync(scenario)()
    finally:
        proxy.close()
    assert figure(healthy_html, "brokers-up") == 3
    assert stuck_was_silent
    assert figure(stuck_html, "brokers-up") == 3


def test_a_socket_that_fails_does_not_stop_the_updates_of_the_others(cluster, users, settings, unique_topic):
    from console.live import ClusterFeed
    from tests.console.conftest import make_topic

    settings.LIVE_POLL_SECONDS = 0.2

    class ClosedSocket:
        """A subscriber whose connection broke: every send raises."""
        async def fragment_changed(self, html):
            raise ConnectionResetError("the peer went away")

        async def fragment_gone(self):
            raise ConnectionResetError("the peer went away")

    communicator = communicator_for(cluster, users["viewer"])

    async def scenario():
        closed = ClosedSocket()
        feed = await ClusterFeed.subscribe(cluster.pk, closed, (OVERVIEW, ()))
        assert (await communicator.connect(timeout=FIRST_RENDER))[0]
        before = await communicator.receive_from(timeout=FIRST_RENDER)
        await database_sync_to_async(make_topic)(cluster, unique_topic(), partitions=2)
        after = await receive_until(communicator, lambda h: figure(h, "topics") > figure(before, "topics"),
                                    "the new topic")
        await feed.unsubscribe(closed)
        await communicator.disconnect()
        return before, after
    before, after = async_to_sync(scenario)()
    assert figure(after, "partitions") == figure(before, "partitions") + 2
