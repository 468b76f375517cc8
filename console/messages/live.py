"""Websocket for a topic's messages: streamed search and live tail.

The page sends JSON commands: {"action": "search", ...form fields}, {"action": "tail", ...},
{"action": "stop"}, {"action": "pause"}, {"action": "resume"}. The consumer stays thin: it
checks the role, parses the command with the same form code as the HTTP views, and runs the
selector's generator on a worker thread, forwarding its events as JSON (records as plain
data: the page writes them with textContent, so no payload is ever parsed as HTML).
Viewers get masked values, as everywhere else.
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.db import close_old_connections

from console.accounts.roles import OPERATOR, VIEWER, has_role
from console.clusters.selectors import cluster_get
from console.errors import ConsoleError
from console.messages import selectors
from console.messages.forms import filter_spec_from, formats_from, search_query_from
from console.messages.tail import tail

log = logging.getLogger(__name__)
MATCHES_PER_FRAME = 50
TAIL_SHOWN_PER_SECOND = 100


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
            self.stop_flag, self.pause_flag = threading.Event(), threading.Event()
            run = self._run_search if action == "search" else self._run_tail
            self.job = asyncio.create_task(self._run(run, command, self.stop_flag, self.pause_flag))
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

    async def _run(self, run, command: dict, stop: threading.Event, pause: threading.Event) -> None:
        """Run a blocking generator on a daemon thread (a tail never ends by itself, and must
        not keep a stopping server alive); its events come back through a queue."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue(maxsize=100)
        finished = asyncio.Event()

        def put(event):
            if not stop.is_set() or event is None or event.get("type") in ("done", "error"):
                asyncio.run_coroutine_threadsafe(queue.put(event), loop).result()

        def work():
            close_old_connections()
            try:
                run(command, put, stop, pause)
            except ConsoleError as exc:
                put({"type": "error", "message": str(exc)})
            except Exception:  # noqa: BLE001 - the socket must hear that it ended
                log.exception("Messages socket job failed")
                put({"type": "error", "message": "The console failed to read the topic; see its log."})
            finally:
                close_old_connections()
                loop.call_soon_threadsafe(finished.set)
                with contextlib.suppress(RuntimeError):
                    asyncio.run_coroutine_threadsafe(queue.put(None), loop)
        threading.Thread(target=work, name=f"messages-{self.topic}", daemon=True).start()
        try:
            while (event := await queue.get()) is not None:
                await self._send(event)
        finally:
            stop.set()
            while not finished.is_set():   # drain, so the worker is never blocked on a full queue
                with contextlib.suppress(asyncio.QueueEmpty):
                    queue.get_nowait()
                await asyncio.sleep(0.01)

    def _run_search(self, command: dict, put, stop: threading.Event, pause: threading.Event) -> None:
        cluster = cluster_get(cluster_id=self.cluster_id)
        query, formats = search_query_from(command)
        pending: list[dict] = []
        for kind, item in selectors.message_search(cluster=cluster, topic=self.topic, query=query, mask=self.mask,
                                                   formats=formats, should_stop=stop.is_set):
            if kind == "notes":
                put({"type": "notes", "notes": item})
            elif kind == "match":
                pending.append(item[1].as_dict(preview=True))
                if len(pending) >= MATCHES_PER_FRAME:
                    put({"type": "matches", "messages": pending})
                    pending = []
            else:
                if pending:
                    put({"type": "matches", "messages": pending})
                    pending = []
                put({"type": "done" if kind == "done" else "stats", "stats": item.as_dict()})

    def _run_tail(self, command: dict, put, stop: threading.Event, pause: threading.Event) -> None:
        cluster = cluster_get(cluster_id=self.cluster_id)
        presenter = selectors.presenter_for(cluster=cluster, topic=self.topic, mask=self.mask,
                                            formats=formats_from(command))
        record_filter = selectors.record_filter(spec=filter_spec_from(command), presenter=presenter)
        with selectors.topic_reader(cluster=cluster, topic=self.topic) as reader:
            for kind, item in tail(reader, record_filter, max_shown_per_second=TAIL_SHOWN_PER_SECOND,
                                   should_stop=stop.is_set, is_paused=pause.is_set):
                if kind == "record":
                    put({"type": "record", "message": presenter.present(item).as_dict(preview=True)})
                elif kind == "started":
                    put({"type": "tailing", "positions": {str(p): o for p, o in item.items()}})
                else:
                    put({"type": "tail_stats", "stats": item})
