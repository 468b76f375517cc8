"""The live overview socket, through the real ASGI stack (auth middleware, routing) and a real engine."""
from __future__ import annotations

import re

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.asgi import application
from console.clusters.gateway import cluster_gateway
from console.topics.services import topic_create

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
    settings.OVERVIEW_POLL_SECONDS = 0.2

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
    assert re.search(r'<tr data-broker="2" data-up="false">', after)


def test_a_console_event_rerenders_at_once_without_waiting_for_the_poll(
        private_cluster, users, settings, unique_topic, django_capture_on_commit_callbacks):
    """With polling effectively off, only the topic.created event can bring the new count."""
    settings.OVERVIEW_POLL_SECONDS = 3600

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
