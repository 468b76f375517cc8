"""Which instance is the primary: a Kafka group of protocol type "sr", as Confluent's.

Every instance joins the group (`schema-registry` by default) with protocol "v0" and its
identity as metadata, Confluent's JSON:
    {"version":1,"host":H,"port":P,"master_eligibility":true,"scheme":"http"}
The group's leader (the member the coordinator picks, not necessarily the primary)
chooses the primary as Confluent's SchemaRegistryCoordinator does: the eligible member with
the smallest URL; every member gets the same assignment:
    {"version":1,"error":0,"master":MEMBER_ID,"master_identity":{...}}
So our instances, Confluent's and Karapace's can share one group. A member heartbeats every
`heartbeat_interval_ms`; when the primary dies, the coordinator drops it after the session
timeout and the others rejoin and elect again. While a rebalance runs no primary is known,
and writes wait for one (registry.py).
"""
from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass

from aiokafka.client import AIOKafkaClient, ConnectionGroup, CoordinationType
from aiokafka.errors import KafkaError, for_code
from aiokafka.protocol.group import HeartbeatRequest, JoinGroupRequest, LeaveGroupRequest, SyncGroupRequest

log = logging.getLogger(__name__)
PROTOCOL_TYPE = "sr"
PROTOCOL = "v0"
NONE, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS, MEMBER_ID_REQUIRED = 0, 25, 22, 27, 79
COORDINATOR_GONE = {14, 15, 16}   # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR


@dataclass(frozen=True)
class Identity:
    host: str
    port: int
    scheme: str = "http"
    eligible: bool = True

    @property
    def url(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}"

    def to_json(self) -> dict:
        return {"version": 1, "host": self.host, "port": self.port, "master_eligibility": self.eligible,
                "scheme": self.scheme}

    @classmethod
    def from_json(cls, value: dict) -> "Identity":
        return cls(str(value["host"]), int(value["port"]), str(value.get("scheme") or "http"),
                   bool(value.get("master_eligibility", True)))


def choose_primary(members: dict[str, Identity]) -> tuple[str | None, Identity | None]:
    eligible = sorted((identity.url, member) for member, identity in members.items() if identity.eligible)
    if not eligible:
        return None, None
    member = eligible[0][1]
    return member, members[member]


class Election:
    def __init__(self, client_kwargs: dict, group_id: str, identity: Identity,
                 session_timeout_ms: int = 10000, heartbeat_interval_ms: int = 1000) -> None:
        self.client = AIOKafkaClient(client_id="schema-registry-election", **client_kwargs)
        self.group_id = group_id
        self.identity = identity
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_interval = heartbeat_interval_ms / 1000
        self.member_id = ""
        self.generation = -1
        self.primary: Identity | None = None
        self.changed = asyncio.Event()       # set whenever `primary` is known again
        self._task: asyncio.Task | None = None
        self._coordinator: int | None = None

    @property
    def is_primary(self) -> bool:
        return self.primary is not None and self.primary == self.identity

    async def start(self) -> None:
        await self.client.bootstrap()
        self._task = asyncio.create_task(self._run(), name="primary-election")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._coordinator is not None and self.member_id:
            try:
                await asyncio.wait_for(self.client.send(self._coordinator, LeaveGroupRequest(
                    self.group_id, self.member_id), group=ConnectionGroup.COORDINATION), 5)
            except (KafkaError, asyncio.TimeoutError, OSError):
                pass
        await self.client.close()

    async def wait_for_primary(self, timeout: float) -> Identity | None:
        if self.primary is None:
            try:
                await asyncio.wait_for(self.changed.wait(), timeout)
            except asyncio.TimeoutError:
                return None
        return self.primary

    def _lost(self) -> None:
        if self.primary is not None:
            log.info("Primary unknown while the group rebalances")
        self.primary = None
        self.changed.clear()

    async def _run(self) -> None:
        while True:
            try:
                self._coordinator = await self.client.coordinator_lookup(CoordinationType.GROUP, self.group_id)
                await self._join_and_sync()
                await self._heartbeat_until_rebalance()
            except asyncio.CancelledError:
                raise
            except (KafkaError, OSError, asyncio.TimeoutError, ValueError, KeyError) as exc:
                log.info("Election: %s; joining again", exc)
                self._lost()
                await asyncio.sleep(0.5)

    async def _send(self, request):
        return await asyncio.wait_for(
            self.client.send(self._coordinator, request, group=ConnectionGroup.COORDINATION),
            self.session_timeout_ms / 1000 + 30)

    async def _join_and_sync(self) -> None:
        self._lost()
        metadata = json.dumps(self.identity.to_json(), separators=(",", ":")).encode()
        while True:
            join = await self._send(JoinGroupRequest(
                self.group_id, self.session_timeout_ms, self.session_timeout_ms, self.member_id, None,
                PROTOCOL_TYPE, [(PROTOCOL, metadata)]))
            if join.error_code == MEMBER_ID_REQUIRED:
                self.member_id = join.member_id
                continue
            if join.error_code == UNKNOWN_MEMBER_ID:
                self.member_id = ""
                continue
            if join.error_code == REBALANCE_IN_PROGRESS:
                continue
            if join.error_code != NONE:
                raise for_code(join.error_code)()
            break
        self.member_id, self.generation = join.member_id, join.generation_id
        assignments = []
        if join.leader_id == join.member_id:
            members = {m[0]: Identity.from_json(json.loads(m[-1])) for m in join.members}
            primary_member, primary = choose_primary(members)
            duplicate = len({i.url for i in members.values()}) != len(members)
            body = {"version": 1, "error": 1 if duplicate else 0, "master": primary_member,
                    "master_identity": primary.to_json() if primary else None}
            encoded = json.dumps(body, separators=(",", ":")).encode()
            assignments = [(member, encoded) for member in members]
            if duplicate:
                log.error("Registry instances share a URL: give each its own --advertised-host/--port")
        sync = await self._send(SyncGroupRequest(self.group_id, self.generation, self.member_id, None, assignments))
        if sync.error_code != NONE:
            raise for_code(sync.error_code)()
        assignment = json.loads(sync.member_assignment) if sync.member_assignment else {}
        identity = assignment.get("master_identity")
        self.primary = Identity.from_json(identity) if identity else None
        if self.primary is not None:
            self.changed.set()
            log.info("Primary: %s%s (generation %d)", self.primary.url, " (this instance)" if self.is_primary else "",
                     self.generation)

    async def _heartbeat_until_rebalance(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_interval)
            response = await self._send(HeartbeatRequest(self.group_id, self.generation, self.member_id))
            if response.error_code == NONE:
                continue
            if response.error_code in (UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION):
                self.member_id = "" if response.error_code == UNKNOWN_MEMBER_ID else self.member_id
                return
            if response.error_code == REBALANCE_IN_PROGRESS:
                return
            if response.error_code in COORDINATOR_GONE:
                raise for_code(response.error_code)()
            raise for_code(response.error_code)()
