"""How a herder learns its work: as a member of the Connect group (distributed) or alone
(standalone). Both hand the herder assignments in the incremental cooperative shape (start
these, revoke those), so one herder serves both.

WorkerCoordinator is Connect's WorkerCoordinator on kafka-python's group client: protocol
type `connect`, the worker's REST URL, config offset and current work in its metadata
(protocol.py). The leader assigns with IncrementalCooperativeAssignor after making sure its
config snapshot is at least as new as every member's (else it answers CONFIG_MISMATCH and
everyone rejoins). JoinGroup, SyncGroup and heartbeats run on kafka-python's network thread;
the herder's thread calls `poll()` between its own work.
"""
from __future__ import annotations

import logging
import threading
import time

import kafka.errors as Errors
from kafka.coordinator.base import BaseCoordinator
from kafka.net.compat import KafkaNetClient

from engine.connect import protocol
from engine.connect.assignor import IncrementalCooperativeAssignor
from engine.connect.protocol import Assignment, WorkerState
from engine.client_settings import kafka_python_settings

log = logging.getLogger("engine.connect.membership")


def _now_ms() -> int:
    return int(time.time() * 1000)


class WorkerCoordinator(BaseCoordinator):
    def __init__(self, client, herder, mode: str, max_delay_ms: int, **configs) -> None:
        super().__init__(client, **configs)
        self.herder = herder
        self.mode = mode
        self.assignor = IncrementalCooperativeAssignor(max_delay_ms, _now_ms)
        self.last_completed_generation = -1
        self.received: Assignment | None = None
        self.leader_members: dict[str, str] = {}              # member id -> url (leader only)
        self.leader_owners: dict[object, str] = {}            # connector or task -> member id (leader only)
        self.lock = threading.Lock()

    def protocol_type(self) -> str:
        return "connect"

    def group_protocols(self):
        state = WorkerState(self.herder.url, self.herder.config_offset(), *self.herder.running_work())
        return protocol.group_protocols(state, self.mode)

    def _perform_assignment(self, leader_id, protocol_name, members):
        states = {m.member_id: protocol.deserialize_metadata(m.metadata) for m in members}
        max_offset = max(s.config_offset for s in states.values())
        version = protocol.VERSIONS.get(protocol_name, 1)
        snapshot = self.herder.leader_snapshot(max_offset)
        leader_url = states[leader_id].url
        if snapshot is None:
            log.info("Was selected to perform assignments, but do not have latest config found in sync request. "
                     "Returning an empty configuration to trigger re-sync.")
            return {m: protocol.serialize_assignment(Assignment(error=protocol.CONFIG_MISMATCH, leader=leader_id,
                                                                leader_url=leader_url, config_offset=max_offset,
                                                                version=max(version, 0)))
                    for m in states}
        if version == 0:
            return self._eager(states, snapshot, leader_id, leader_url)
        current = {m: (list(s.connectors), list(s.tasks)) for m, s in states.items()}
        result = self.assignor.assign(current, snapshot.connectors(), snapshot.all_tasks(),
                                      self.last_completed_generation, self._generation.generation_id)
        self._remember(states, result.all_connectors, result.all_tasks)
        return {m: protocol.serialize_assignment(Assignment(
            leader=leader_id, leader_url=leader_url, config_offset=snapshot.offset,
            connectors=result.assigned_connectors.get(m, []), tasks=result.assigned_tasks.get(m, []),
            revoked_connectors=result.revoked_connectors.get(m, []), revoked_tasks=result.revoked_tasks.get(m, []),
            delay=result.delay, version=version)) for m in states}

    def _eager(self, states, snapshot, leader_id, leader_url):
        members = sorted(states)
        connectors = {m: [] for m in members}
        tasks = {m: [] for m in members}
        for i, connector in enumerate(snapshot.connectors()):
            connectors[members[i % len(members)]].append(connector)
        for i, task in enumerate(snapshot.all_tasks()):
            tasks[members[i % len(members)]].append(task)
        self._remember(states, connectors, tasks)
        return {m: protocol.serialize_assignment(Assignment(leader=leader_id, leader_url=leader_url,
                                                            config_offset=snapshot.offset, connectors=connectors[m],
                                                            tasks=tasks[m], version=0)) for m in members}

    def _remember(self, states, connectors, tasks) -> None:
        with self.lock:
            self.leader_members = {m: s.url for m, s in states.items()}
            self.leader_owners = {c: m for m, cs in connectors.items() for c in cs}
            self.leader_owners.update({t: m for m, ts in tasks.items() for t in ts})

    async def _on_join_complete_async(self, generation, member_id, protocol_name, member_assignment_bytes):
        assignment = protocol.deserialize_assignment(member_assignment_bytes)
        with self.lock:
            self.received = assignment
            if not assignment.failed:
                self.last_completed_generation = generation
        self.herder.wakeup()

    def take_assignment(self) -> Assignment | None:
        with self.lock:
            assignment, self.received = self.received, None
            return assignment

    def owner_url(self, item) -> str | None:
        with self.lock:
            member = self.leader_owners.get(item)
            return self.leader_members.get(member) if member else None


class GroupMembership:
    """The distributed worker's view of the group."""

    def __init__(self, herder, config) -> None:
        settings = kafka_python_settings(config.client_settings())
        client_id = config["client.id"] or f"connect-{config['group.id']}"
        self.client = KafkaNetClient(client_id=client_id, **settings)
        self.client._net.start()
        manager = self.client._manager
        manager.bootstrap(30000)
        mode = "eager" if config["connect.protocol"].lower() == "eager" else "compatible"
        self.coordinator = WorkerCoordinator(
            self.client, herder, mode, config["scheduled.rebalance.max.delay.ms"],
            group_id=config["group.id"], session_timeout_ms=config["session.timeout.ms"],
            heartbeat_interval_ms=config["heartbeat.interval.ms"],
            max_poll_interval_ms=config["rebalance.timeout.ms"], api_version=manager.broker_version)
        self.member_id = ""
        self.generation = -1

    def poll(self, timeout_ms: int) -> Assignment | None:
        """Heartbeat; rejoin if needed (bounded by `timeout_ms`); the new assignment, if any."""
        c = self.coordinator
        try:
            c.poll_heartbeat()
        except Errors.KafkaError as exc:
            log.warning("Heartbeat failed, rejoining: %s", exc)
            c.request_rejoin()
        if c.need_rejoin() or c.coordinator_unknown():
            try:
                c.ensure_active_group(timeout_ms=timeout_ms)
            except Errors.KafkaError as exc:
                log.warning("Joining group %s failed: %s", c.group_id, exc)
        generation = c.generation_if_stable()
        if generation is not None:
            self.member_id, self.generation = generation.member_id, generation.generation_id
        return c.take_assignment()

    def rebalancing(self) -> bool:
        return self.coordinator.rebalance_in_progress() or self.coordinator.need_rejoin()

    def request_rejoin(self) -> None:
        self.coordinator.request_rejoin()

    def owner_url(self, item) -> str | None:
        return self.coordinator.owner_url(item)

    def close(self) -> None:
        try:
            self.coordinator.close(timeout_ms=5000)
        finally:
            self.client._net.stop() if hasattr(self.client._net, "stop") else None


class SoleMembership:
    """Standalone: this worker is the whole cluster and its own leader; every configured
    connector and task is its own, handed over in the same start/revoke shape."""

    def __init__(self, herder) -> None:
        self.herder = herder
        self.member_id, self.generation = "standalone", 1
        self._rejoin = True
        self.owned_connectors: set[str] = set()
        self.owned_tasks: set[tuple[str, int]] = set()

    def poll(self, timeout_ms: int) -> Assignment | None:
        if not self._rejoin:
            return None
        self._rejoin = False
        snapshot = self.herder.config_store.snapshot()
        connectors, tasks = set(snapshot.connectors()), set(snapshot.all_tasks())
        assignment = Assignment(leader=self.member_id, leader_url=self.herder.url, config_offset=snapshot.offset,
                                connectors=sorted(connectors - self.owned_connectors),
                                tasks=sorted(tasks - self.owned_tasks),
                                revoked_connectors=sorted(self.owned_connectors - connectors),
                                revoked_tasks=sorted(self.owned_tasks - tasks))
        self.owned_connectors, self.owned_tasks = connectors, tasks
        self.generation += 1
        return assignment

    def rebalancing(self) -> bool:
        return False

    def request_rejoin(self) -> None:
        self._rejoin = True
        self.herder.wakeup()

    def owner_url(self, item) -> str | None:
        return self.herder.url

    def close(self) -> None:
        pass
