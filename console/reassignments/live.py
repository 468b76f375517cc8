"""Live job progress: the runner's events (sent after commit) reach the job page's socket.

The worker announces `reassignment.progress` with `notify_on_commit`; the receiver below
forwards it to the job's group on the channel layer (Redis, shared by workers and web
servers), and each socket of that job sends it to its page as JSON.
"""
from __future__ import annotations

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from channels.layers import get_channel_layer
from django.dispatch import receiver

from console.accounts.roles import VIEWER, has_role
from console.events import console_event

EVENTS = ("reassignment.progress",)


def job_group(job_id: int) -> str:
    return f"reassignment-{job_id}"


class JobProgressConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await database_sync_to_async(has_role)(user, VIEWER):
            await self.close()
            return
        job_id = int(self.scope["url_route"]["kwargs"]["job_id"])
        self.group = job_group(job_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        # Where the job is now: the page may have been rendered before the last event.
        progress = await database_sync_to_async(_current_progress)(job_id)
        if progress is not None:
            await self.send_json(progress)

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def job_progress(self, message):
        await self.send_json(message["progress"])


def _current_progress(job_id: int) -> dict | None:
    from console.reassignments.models import Reassignment
    from console.reassignments.selectors import job_progress
    job = Reassignment.objects.filter(pk=job_id).first()
    return None if job is None else job_progress(job=job).as_event()


@receiver(console_event)
def forward_progress(sender, *, event: str, payload: dict, **kwargs) -> None:
    layer = get_channel_layer()
    if layer is None or event not in EVENTS or "job" not in payload:
        return
    async_to_sync(layer.group_send)(job_group(payload["job"]), {"type": "job.progress", "progress": payload})
