"""Live overview: a websocket consumer that pushes the overview partial when it changes.

Kafka has no push, so each socket polls `cluster_overview` every OVERVIEW_POLL_SECONDS and
sends the rendered partial only when the HTML differs from what it last sent. A console event
(a broker stopped from the console, a topic created …) wakes the poller at once: the receiver
below forwards it to the cluster's group on the channel layer. Events are sent on commit
(console.events), so a socket never shows a change that was rolled back.
"""
from __future__ import annotations

import asyncio
import contextlib

from asgiref.sync import async_to_sync
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


class OverviewConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await database_sync_to_async(has_role)(user, VIEWER):
            await self.close()
            return
        self.cluster_id = int(self.scope["url_route"]["kwargs"]["cluster_id"])
        self.group = overview_group(self.cluster_id)
        self.last_html: str | None = None
        self.wake = asyncio.Event()
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.poller = asyncio.create_task(self.poll())

    async def disconnect(self, code):
        poller = getattr(self, "poller", None)
        if poller is not None:
            poller.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await poller
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def poll(self):
        while True:
            self.wake.clear()   # before rendering: an event during the render means render again
            try:
                html = await database_sync_to_async(overview_html)(cluster_id=self.cluster_id)
            except NotFound:
                await self.close()
                return
            if html != self.last_html:
                self.last_html = html
                await self.send(text_data=html)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), timeout=settings.OVERVIEW_POLL_SECONDS)

    async def console_event(self, message):
        """Type "console.event" on the group: something changed, re-render now."""
        self.wake.set()


@receiver(console_event)
def forward_to_overview(sender, *, event: str, payload: dict, **kwargs) -> None:
    layer = get_channel_layer()
    if layer is None or "cluster" not in payload:
        return
    async_to_sync(layer.group_send)(overview_group(payload["cluster"]), {"type": "console.event", "event": event})
