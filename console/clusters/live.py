"""Live overview: a websocket consumer that pushes the overview partial when it changes.

Kafka has no push, so the console polls. Each server process keeps one `OverviewFeed` per
watched cluster, shared by all of that cluster's sockets: it renders `cluster_overview` every
OVERVIEW_POLL_SECONDS and sends the partial to every subscriber only when the HTML differs
from the last one. A console event (a broker stopped from the console, a topic created …)
wakes the feed at once: the receiver below forwards it to the cluster's group on the channel
layer, and any subscriber that hears it wakes its feed. Events are sent on commit
(console.events), so a socket never shows a change that was rolled back.

Each feed renders on a thread of its own (a ThreadSensitiveContext), not on the single thread
Channels shares between all consumers: a cluster that does not answer holds up only its own
sockets, for up to the gateway's bootstrap timeout.
"""
from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from asgiref.sync import ThreadSensitiveContext, async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.conf import settings
from django.dispatch import receiver
from django.template.loader import render_to_string

from console.accounts.roles import VIEWER, has_role
from console.clusters import selectors
from console.errors import ConsoleError, NotFound
from console.events import console_event

log = logging.getLogger(__name__)

def overview_group(cluster_id: int) -> str:
    return f"cluster-{cluster_id}-overview"


def overview_html(*, cluster_id: int) -> str:
    """The overview partial, as the page renders it; an unreachable cluster renders as a warning."""
    cluster = selectors.cluster_get(cluster_id=cluster_id)
    try:
        overview = selectors.cluster_overview(cluster=cluster)
    except NotFound:
        raise
    except ConsoleError as exc:
        return render_to_string("clusters/_overview_unavailable.html", {"message": str(exc)})
    return render_to_string("clusters/_overview_body.html", {"overview": overview, "cluster": cluster})


class Subscriber(Protocol):
    async def overview_changed(self, html: str) -> None: ...
    async def cluster_gone(self) -> None: ...


class OverviewFeed:
    """One cluster's overview for every socket of this process that watches it (see the module
    docstring). Lives on the server's event loop; not thread-safe."""

    _feeds: dict[int, OverviewFeed] = {}

    def __init__(self, cluster_id: int) -> None:
        self.cluster_id = cluster_id
        self.subscribers: set[Subscriber] = set()
        self.html: str | None = None
        self.wake = asyncio.Event()
        self.task = asyncio.create_task(self._run(), name=f"overview-feed-{cluster_id}")

    @classmethod
    async def subscribe(cls, cluster_id: int, subscriber: Subscriber) -> OverviewFeed:
        feed = cls._feeds.get(cluster_id)
        if feed is None or feed.task.done() or feed.task.get_loop() is not asyncio.get_running_loop():
            feed = cls._feeds[cluster_id] = cls(cluster_id)   # a feed left by a stopped loop is dropped
        feed.subscribers.add(subscriber)
        if feed.html is not None:
            await subscriber.overview_changed(feed.html)
        return feed

    @classmethod
    def watched(cls) -> dict[int, int]:
        """{cluster id: sockets watching it} in this process."""
        return {cluster_id: len(feed.subscribers) for cluster_id, feed in cls._feeds.items()}

    async def unsubscribe(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)
        if self.subscribers or self._feeds.get(self.cluster_id) is not self:
            return
        del self._feeds[self.cluster_id]
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def _run(self) -> None:
        render = database_sync_to_async(overview_html)
        async with ThreadSensitiveContext():   # this feed's renders get a thread of their own
            while True:
                self.wake.clear()   # before rendering: an event during the render means render again
                try:
                    html = await render(cluster_id=self.cluster_id)
                except NotFound:
                    await self._close_all()
                    return
                except Exception:  # noqa: BLE001 - a bug or a database outage must not end the feed
                    log.exception("Rendering the overview of cluster %s failed", self.cluster_id)
                    html = self.html
                if html != self.html:
                    self.html = html
                    # A socket that fails while closing must not stop the others' updates.
                    await asyncio.gather(*(s.overview_changed(html) for s in list(self.subscribers)),
                                         return_exceptions=True)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), timeout=settings.OVERVIEW_POLL_SECONDS)

    async def _close_all(self) -> None:
        if self._feeds.get(self.cluster_id) is self:
            del self._feeds[self.cluster_id]
        await asyncio.gather(*(s.cluster_gone() for s in list(self.subscribers)), return_exceptions=True)


class OverviewConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await database_sync_to_async(has_role)(user, VIEWER):
            await self.close()
            return
        self.cluster_id = int(self.scope["url_route"]["kwargs"]["cluster_id"])
        self.group = overview_group(self.cluster_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.feed = await OverviewFeed.subscribe(self.cluster_id, self)

    async def disconnect(self, code):
        feed = getattr(self, "feed", None)
        if feed is not None:
            await feed.unsubscribe(self)
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def overview_changed(self, html: str) -> None:
        await self.send(text_data=html)

    async def cluster_gone(self) -> None:
        await self.close()

    async def console_event(self, message):
        """Type "console.event" on the group: something changed, re-render now."""
        feed = getattr(self, "feed", None)
        if feed is not None:
            feed.wake.set()


@receiver(console_event)
def forward_to_overview(sender, *, event: str, payload: dict, **kwargs) -> None:
    layer = get_channel_layer()
    if layer is None or "cluster" not in payload:
        return
    async_to_sync(layer.group_send)(overview_group(payload["cluster"]), {"type": "console.event", "event": event})
