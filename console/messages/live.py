"""Websocket for a topic's messages: streamed search and live tail.

The page sends JSON commands: {"action": "search", ...form fields}, {"action": "tail", ...},
{"action": "stop"}, {"action": "pause"}, {"action": "resume"}. The consumer stays thin: it
checks the role on connect, and runs one job at a time (`socket_events`) on a daemon thread,
forwarding every event it yields as JSON (a job asked to stop still sends what it read before
stopping). Viewers get masked values, as everywhere else.

A tail started while another ran (or after one ran) on the socket continues where that one
stopped, with the new filter: restarting a tail never skips the records produced meanwhile.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from functools import partial

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import close_old_connections

from console.accounts.roles import OPERATOR, VIEWER, has_role
from console.errors import ConsoleError
from console.messages.socket_events import search_events, tail_events

log = logging.getLogger(__name__)


class MessagesConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        user = self.scope.get("user")
        if user is None or not user.is_authenticated or not await database_sync_to_async(has_role)(user, VIEWER):
            await self.close()
            return
        kwargs = self.scope["url_route"]["kwargs"]
        self.cluster_id, self.topic = int(kwargs["cluster_id"]), kwargs["name"]
        self.mask = not await database_sync_to_async(has_role)(user, OPERATOR)
        self.job: asyncio.Task | None = None
        self.tail_stopped_at = ""          # where the socket's last tail stopped ("0:12,1:40")
        self.stop_flag = threading.Event()
        self.pause_flag = threading.Event()
        await self.accept()

    async def disconnect(self, code):
        await self._stop_job()

    async def receive(self, text_data=None, bytes_data=None):
        try:
            command = json.loads(text_data or "{}")
            action = command.get("action")
        except (ValueError, AttributeError):
            await self._send({"type": "error", "message": "Commands are JSON objects with an action."})
            return
        if action in ("search", "tail"):
            await self._stop_job()
            if action == "tail" and self.tail_stopped_at and not command.get("positions"):
                command = {**command, "positions": self.tail_stopped_at}
            stop, pause = self.stop_flag, self.pause_flag = threading.Event(), threading.Event()
            common = {"cluster_id": self.cluster_id, "topic": self.topic, "command": command, "mask": self.mask,
                      "should_stop": stop.is_set}
            events = partial(search_events, **common) if action == "search" else \
                partial(tail_events, **common, is_paused=pause.is_set)
            self.job = asyncio.create_task(self._forward(events, stop))
        elif action == "stop":
            self.stop_flag.set()
        elif action == "pause":
            self.pause_flag.set()
        elif action == "resume":
            self.pause_flag.clear()
        else:
            await self._send({"type": "error", "message": f"Unknown action {action!r}."})

    async def _stop_job(self):
        if self.job is not None and not self.job.done():
            self.stop_flag.set()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.job

    async def _send(self, event: dict) -> None:
        await self.send(text_data=json.dumps(event))

    async def _forward(self, events, stop: threading.Event) -> None:
        async for event in _on_a_thread(events, stop):
            if event.get("type") == "tail_stopped":
                self.tail_stopped_at = event["positions"]
            await self._send(event)


async def _on_a_thread(events, stop: threading.Event):
    """Iterate a blocking generator of events on a daemon thread (a tail never ends by itself,
    and must not keep a stopping server alive); a ConsoleError becomes an error event."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue(maxsize=100)
    finished = asyncio.Event()

    def put(event):
        asyncio.run_coroutine_threadsafe(queue.put(event), loop).result()

    def work():
        close_old_connections()
        try:
            for event in events():
                put(event)
        except ConsoleError as exc:
            put({"type": "error", "message": str(exc)})
        except Exception:  # noqa: BLE001 - the socket must hear that it ended
            log.exception("Messages socket job failed")
            put({"type": "error", "message": "The console failed to read the topic; see its log."})
        finally:
            close_old_connections()
            loop.call_soon_threadsafe(finished.set)
    threading.Thread(target=work, name="messages-socket-job", daemon=True).start()
    try:
        while not (finished.is_set() and queue.empty()):
            getter = asyncio.ensure_future(queue.get())
            done_waiter = asyncio.ensure_future(finished.wait())
            await asyncio.wait({getter, done_waiter}, return_when=asyncio.FIRST_COMPLETED)
            done_waiter.cancel()
            if getter.done():
                yield getter.result()
            else:
                getter.cancel()
    finally:
        stop.set()
        while not finished.is_set():   # drain, so the worker is never blocked on a full queue
            with contextlib.suppress(asyncio.QueueEmpty):
                queue.get_nowait()
            await asyncio.sleep(0.01)
