"""Live fragments over websockets: one feed per watched cluster per server process.

Kafka has no push, so the console polls. Any page can show a live fragment (a piece of HTML
the server re-renders and pushes when it changes) in three steps:

1. Register a render function, in the app's `live.py`, imported by its AppConfig.ready():

       @live.fragment("groups.group")
       def group_fragment(*, cluster_id: int, group_id: str) -> str:
           cluster = cluster_get(cluster_id=cluster_id)       # NotFound -> sockets closed
           view = selectors.group_detail(cluster=cluster, group_id=group_id)  # GatewayError -> "unreachable"
           return render_to_string("groups/_group_live.html", {"view": view, "cluster": cluster})

   It is synchronous (it runs on the feed's own thread, with database access), takes the
   cluster id and the route's other kwargs as strings, and returns HTML. It raises
   `NotFound` when what it shows is gone (its sockets are closed) and any other
   `ConsoleError` when the cluster cannot be asked: the feed then shows
   `live/_unreachable.html` ("unreachable since …") and retries with backoff.

2. Route a consumer: `path("ws/clusters/<int:cluster_id>/groups/<str:group_id>/",
   FragmentConsumer.as_asgi(fragment="groups.group"))` in console/routing.py. Route kwargs
   other than `cluster_id` become the render function's keyword arguments. Subclass
   FragmentConsumer only to raise `minimum_role`.

3. In the page: `<div data-live-fragment="/ws/clusters/{{ cluster.pk }}/groups/{{ id }}/">`
   around the server-rendered fragment, and `<script src="{% static 'js/live.js' %}">`.
   live.js replaces the element's content with each push and reconnects with backoff; it
   sets `data-live` to connected / reconnecting and counts connections in `data-connects`.

How a feed runs (`ClusterFeed`): all sockets of one cluster in this process share one feed.
Each poll (LIVE_POLL_SECONDS) renders every distinct (fragment, kwargs) that a socket
watches, once, and sends the HTML only to that fragment's sockets and only when it changed.
A console event (`console.events.notify_on_commit` with a "cluster" in the payload) wakes
the cluster's feeds at once through the channel layer. When the cluster cannot be asked,
the feed waits LIVE_POLL_SECONDS doubled per failure, up to LIVE_MAX_BACKOFF_SECONDS,
instead of bootstrapping again every second; the first success resets it. When the last
socket leaves, the feed's task is cancelled: nothing polls a cluster nobody watches.

Each feed renders on a thread of its own (a ThreadSensitiveContext), not on the thread
Channels shares between consumers, so a hanging cluster holds up only its own sockets.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime

from asgiref.sync import ThreadSensitiveContext, async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.dispatch import receiver
from django.template.loader import render_to_string
from django.utils import timezone

from console.accounts.roles import VIEWER, has_role
from console.errors import ConsoleError, NotFound
from console.events import console_event

log = logging.getLogger(__name__)

Render = Callable[..., str]
FragmentKey = tuple[str, tuple[tuple[str, str], ...]]   # (fragment name, sorted kwargs)

_fragments: dict[str, Render] = {}


def fragment(name: str) -> Callable[[Render], Render]:
    """Register `render(*, cluster_id, **kwargs) -> html` as the live fragment `name`."""
    def register(render: Render) -> Render:
        if name in _fragments and _fragments[name] is not render:
            raise ValueError(f"live fragment {name!r} is registered twice")
        _fragments[name] = render
        return render
    return register


def cluster_group(cluster_id: int) -> str:
    """The channel-layer group of every live socket watching the cluster."""
    return f"cluster-{cluster_id}-live"


def unreachable_html(*, message: str, since: datetime) -> str:
    return render_to_string("live/_unreachable.html", {"message": message, "since": since})


def backoff_seconds(failures: int) -> float:
    """Seconds until the next poll after `failures` failed polls in a row."""
    if failures <= 0:
        return settings.LIVE_POLL_SECONDS
    return min(settings.LIVE_POLL_SECONDS * 2 ** min(failures, 30), settings.LIVE_MAX_BACKOFF_SECONDS)


class ClusterFeed:
    """One cluster's live fragments for every socket of this process (see the module docstring).
    Lives on the server's event loop; not thread-safe."""

    _feeds: dict[int, ClusterFeed] = {}

    def __init__(self, cluster_id: int) -> None:
        self.cluster_id = cluster_id
        self.subscribers: dict[object, FragmentKey] = {}
        self.html: dict[FragmentKey, str] = {}
        self.failures = 0
        self.unreachable_since: datetime | None = None
        self.renders = 0                   # render calls so far (tests count polls with it)
        self.wake = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"cluster-feed-{cluster_id}")

    @classmethod
    async def subscribe(cls, cluster_id: int, subscriber, key: FragmentKey) -> ClusterFeed:
        if key[0] not in _fragments:
            raise ValueError(f"unknown live fragment {key[0]!r}")
        feed = cls._feeds.get(cluster_id)
        if feed is None or feed.task.done() or feed.task.get_loop() is not asyncio.get_running_loop():
            feed = cls._feeds[cluster_id] = cls(cluster_id)   # a feed left by a stopped loop is dropped
        feed.subscribers[subscriber] = key
        if key in feed.html:
            await subscriber.fragment_changed(feed.html[key])
        else:
            feed.wake.set()                # a fragment nobody watched yet: render it now
        return feed

    @classmethod
    def watched(cls) -> dict[int, int]:
        """{cluster id: sockets watching it} in this process."""
        return {cluster_id: len(feed.subscribers) for cluster_id, feed in cls._feeds.items()}

    @classmethod
    def feed_of(cls, cluster_id: int) -> ClusterFeed | None:
        return cls._feeds.get(cluster_id)

    async def unsubscribe(self, subscriber) -> None:
        key = self.subscribers.pop(subscriber, None)
        if key is not None and key not in self.subscribers.values():
            self.html.pop(key, None)
        if self.subscribers or self._feeds.get(self.cluster_id) is not self:
            return
        del self._feeds[self.cluster_id]
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def _run(self) -> None:
        async with ThreadSensitiveContext():   # this feed's renders get a thread of their own
            while True:
                self.wake.clear()   # before rendering: an event during the render means render again
                await self._poll()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout=backoff_seconds(self.failures))

    async def _poll(self) -> None:
        for key in set(self.subscribers.values()):
            name, kwargs = key
            self.renders += 1
            try:
                html = await database_sync_to_async(_fragments[name])(cluster_id=self.cluster_id, **dict(kwargs))
            except NotFound:
                await self._close(key)
                continue
            except ConsoleError as exc:   # the cluster cannot be asked: every fragment says so
                await self._unreachable(str(exc))
                return
            except Exception:  # noqa: BLE001 - a bug or a database outage must not end the feed
                log.exception("Rendering live fragment %s of cluster %s failed", name, self.cluster_id)
                continue
            self.failures, self.unreachable_since = 0, None
            await self._publish(key, html)

    async def _unreachable(self, message: str) -> None:
        self.failures += 1
        self.unreachable_since = self.unreachable_since or timezone.now()
        html = unreachable_html(message=message, since=self.unreachable_since)
        for key in set(self.subscribers.values()):
            await self._publish(key, html)

    async def _publish(self, key: FragmentKey, html: str) -> None:
        if self.html.get(key) == html:
            return
        self.html[key] = html
        targets = [s for s, k in list(self.subscribers.items()) if k == key]
        # A socket that fails while closing must not stop the others' updates.
        await asyncio.gather(*(s.fragment_changed(html) for s in targets), return_exceptions=True)

    async def _close(self, key: FragmentKey) -> None:
        targets = [s for s, k in list(self.subscribers.items()) if k == key]
        await asyncio.gather(*(s.fragment_gone() for s in targets), return_exceptions=True)


class FragmentConsumer(AsyncWebsocketConsumer):
    """A socket that shows one live fragment: `FragmentConsumer.as_asgi(fragment="name")`."""

    fragment = ""
    minimum_role = VIEWER

    def __init__(self, *args, fragment: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if fragment:
            self.fragment = fragment

    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await database_sync_to_async(has_role)(
                user, self.minimum_role):
            await self.close()
            return
        kwargs = dict(self.scope["url_route"]["kwargs"])
        self.cluster_id = int(kwargs.pop("cluster_id"))
        key: FragmentKey = (self.fragment, tuple(sorted((k, str(v)) for k, v in kwargs.items())))
        self.group = cluster_group(self.cluster_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.feed = await ClusterFeed.subscribe(self.cluster_id, self, key)

    async def disconnect(self, code):
        feed = getattr(self, "feed", None)
        if feed is not None:
            await feed.unsubscribe(self)
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def fragment_changed(self, html: str) -> None:
        await self.send(text_data=html)

    async def fragment_gone(self) -> None:
        await self.close()

    async def console_event(self, message):
        """Type "console.event" on the cluster's group: something changed, re-render now."""
        feed = getattr(self, "feed", None)
        if feed is not None:
            feed.wake.set()


@receiver(console_event)
def forward_to_live_sockets(sender, *, event: str, payload: dict, **kwargs) -> None:
    layer = get_channel_layer()
    if layer is None or "cluster" not in payload:
        return
    async_to_sync(layer.group_send)(cluster_group(payload["cluster"]), {"type": "console.event", "event": event})
