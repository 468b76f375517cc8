"""The live-fragment machinery (console.live) with fragments of the test's own: polling,
backoff while the cluster cannot be asked, the feed stopping with its last subscriber, and
the overview socket held open for a minute on the real Redis channel layer."""
from __future__ import annotations

import asyncio
import time

import pytest
from asgiref.sync import async_to_sync
from django.test import Client

from console import live
from console.errors import NotFound
from console.kafka_gateway import GatewayError

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

calls: dict[str, list[float]] = {"up": [], "down": [], "flaky": []}
flaky_failures = {"left": 0}


@live.fragment("test.up")
def up_fragment(*, cluster_id: int, item: str = "") -> str:
    calls["up"].append(time.monotonic())
    return f"<p>{cluster_id} {item}</p>"


@live.fragment("test.down")
def down_fragment(*, cluster_id: int) -> str:
    calls["down"].append(time.monotonic())
    raise GatewayError("Cannot reach the cluster: connection refused.")


@live.fragment("test.flaky")
def flaky_fragment(*, cluster_id: int) -> str:
    calls["flaky"].append(time.monotonic())
    if flaky_failures["left"] > 0:
        flaky_failures["left"] -= 1
        raise GatewayError("Cannot reach the cluster: connection refused.")
    return "<p>back</p>"


@live.fragment("test.gone")
def gone_fragment(*, cluster_id: int) -> str:
    raise NotFound("There is no cluster.")


class Socket:
    def __init__(self) -> None:
        self.pushed: list[str] = []
        self.gone = asyncio.Event()
        self.changed = asyncio.Event()

    async def fragment_changed(self, html: str) -> None:
        self.pushed.append(html)
        self.changed.set()

    async def fragment_gone(self) -> None:
        self.gone.set()

    async def next_push(self) -> str:
        await asyncio.wait_for(self.changed.wait(), timeout=30)
        self.changed.clear()
        return self.pushed[-1]


@pytest.fixture(autouse=True)
def fresh_calls():
    for log in calls.values():
        log.clear()


def test_a_registered_name_cannot_be_taken_twice():
    with pytest.raises(ValueError, match="registered twice"):
        live.fragment("test.up")(lambda *, cluster_id: "")


def test_backoff_doubles_from_the_poll_interval_up_to_the_cap(settings):
    settings.LIVE_POLL_SECONDS, settings.LIVE_MAX_BACKOFF_SECONDS = 1.0, 30.0
    assert [live.backoff_seconds(n) for n in range(7)] == [1, 2, 4, 8, 16, 30, 30]


def test_one_feed_renders_each_fragment_once_per_poll_and_stops_with_its_last_subscriber(settings):
    settings.LIVE_POLL_SECONDS = 0.05

    async def scenario():
        a, b, c = Socket(), Socket(), Socket()
        feed = await live.ClusterFeed.subscribe(901, a, ("test.up", (("item", "x"),)))
        assert await a.next_push() == "<p>901 x</p>"
        assert await live.ClusterFeed.subscribe(901, b, ("test.up", (("item", "x"),))) is feed
        assert b.pushed == ["<p>901 x</p>"]                     # the last render, at once
        await live.ClusterFeed.subscribe(901, c, ("test.up", (("item", "y"),)))
        assert await c.next_push() == "<p>901 y</p>"
        assert live.ClusterFeed.watched()[901] == 3
        for s in (a, b, c):
            await feed.unsubscribe(s)
        renders_at_stop = feed.renders
        await asyncio.sleep(0.5)                               # ten polls' worth
        return feed, renders_at_stop, a, b
    feed, renders_at_stop, a, b = async_to_sync(scenario)()
    assert 901 not in live.ClusterFeed.watched()
    assert feed.task.done() and feed.renders == renders_at_stop   # nobody watches: nothing polls
    assert a.pushed == b.pushed == ["<p>901 x</p>"]               # unchanged renders are not sent again


def test_an_unreachable_cluster_says_since_when_and_is_retried_with_backoff(settings):
    settings.LIVE_POLL_SECONDS, settings.LIVE_MAX_BACKOFF_SECONDS = 0.05, 0.4

    async def scenario():
        socket = Socket()
        feed = await live.ClusterFeed.subscribe(902, socket, ("test.down", ()))
        html = await socket.next_push()
        await asyncio.sleep(2.0)
        await feed.unsubscribe(socket)
        return html, socket.pushed
    html, pushed = async_to_sync(scenario)()
    assert "unreachable since" in html and "connection refused" in html and "data-unreachable-since=" in html
    assert len(pushed) == 1                 # the same "since" every time: nothing new to send
    gaps = [b - a for a, b in zip(calls["down"], calls["down"][1:])]
    # asyncio never wakes a timeout early, so these lower bounds hold however loaded the machine.
    assert len(gaps) >= 3
    assert [round(g, 2) >= bound for g, bound in zip(gaps, [0.1, 0.2, 0.4, 0.4])] == [True] * min(4, len(gaps))
    assert len(calls["down"]) <= 2.0 / 0.1 + 2   # without backoff it would be about 40


def test_the_first_success_after_failures_resets_the_backoff(settings):
    settings.LIVE_POLL_SECONDS, settings.LIVE_MAX_BACKOFF_SECONDS = 0.05, 0.2
    flaky_failures["left"] = 2

    async def scenario():
        socket = Socket()
        feed = await live.ClusterFeed.subscribe(903, socket, ("test.flaky", ()))
        first = await socket.next_push()
        second = await socket.next_push()
        state = (feed.failures, feed.unreachable_since)
        await feed.unsubscribe(socket)
        return first, second, state
    first, second, (failures, since) = async_to_sync(scenario)()
    assert "unreachable since" in first and second == "<p>back</p>"
    assert failures == 0 and since is None


def test_a_fragment_whose_subject_is_gone_closes_its_sockets():
    async def scenario():
        socket = Socket()
        feed = await live.ClusterFeed.subscribe(904, socket, ("test.gone", ()))
        await asyncio.wait_for(socket.gone.wait(), timeout=30)
        await feed.unsubscribe(socket)
        return socket.pushed
    assert async_to_sync(scenario)() == []


def test_the_overview_of_an_unreachable_cluster_says_unreachable_since(db, users, settings):
    from console.clusters.live import overview_html
    from console.clusters.services import cluster_create
    from tests.support.engine_process import free_port_range

    settings.KAFKA_BOOTSTRAP_TIMEOUT_MS = 1000
    dead = cluster_create(name="dead", bootstrap_servers=f"127.0.0.1:{free_port_range(1)}")
    with pytest.raises(GatewayError):
        overview_html(cluster_id=dead.pk)   # the feed turns this into the "unreachable since" fragment


@pytest.mark.slow
def test_an_overview_socket_outlives_the_old_redis_timeout_on_the_redis_channel_layer(cluster, users, settings,
                                                                                      redis_server):
    """redis-py 8's default 5 s socket timeout against channels_redis's 5 s blocking receive
    killed the consumer after ~5 s (redis.exceptions.TimeoutError; channels_redis#422), so every
    socket reconnected about every 7 s; settings.channel_layers fixes it. 20 s here is four of
    those timeouts; the browser test holds the page's socket a full minute on the same Redis."""
    from channels.layers import get_channel_layer
    from channels.testing import WebsocketCommunicator

    from console.asgi import application
    from console.events import notify
    from console.settings import channel_layers

    settings.CHANNEL_LAYERS = channel_layers(redis_server.url)
    settings.LIVE_POLL_SECONDS = 3600      # only the event below can bring a second push
    client = Client()
    client.force_login(users["viewer"])
    communicator = WebsocketCommunicator(
        application, f"/ws/clusters/{cluster.pk}/overview/",
        headers=[(b"origin", b"http://127.0.0.1:80"), (b"host", b"127.0.0.1"),
                 (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())])

    async def scenario():
        assert type(get_channel_layer()).__name__ == "RedisChannelLayer"
        assert (await communicator.connect(timeout=30))[0]
        first = await communicator.receive_from(timeout=30)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            assert not communicator.future.done(), "the consumer died: the socket would reconnect"
            await asyncio.sleep(1)
        # Still subscribed to its group on Redis: a console event reaches it and it answers.
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: notify("test.event", {"cluster": cluster.pk}))
        await communicator.receive_nothing(timeout=1)
        assert not communicator.future.done()
        await communicator.disconnect()
        return first
    assert "ov-brokers-up" in async_to_sync(scenario)()
