"""The herder: one thread that owns a worker's connectors and tasks (Connect's
DistributedHerder; StandaloneHerder is the same herder with a membership of one).

Each tick it heartbeats (membership.poll), applies a new assignment (stop what is revoked,
start what is assigned, rejoin after revoking so the leader can hand it on, and rejoin again
when a scheduled delay runs out), applies config topic changes (connector configs, target
states, task configs, restart requests; read by the config store's thread and queued here),
regenerates task configs for its connectors that need them (written by the leader, or
forwarded to it), and runs queued REST requests. Requests that change configs run on the
leader only: elsewhere they raise NotLeader and the REST layer forwards them.

State owned by this thread: what runs here (`running_connectors`, `running_tasks`, read by
the group client under `_lock`), the pending changes, the leader's identity.
"""
from __future__ import annotations

import json
import logging
import threading
import time
import urllib.request
from collections import deque
from concurrent.futures import Future

from engine.connect.config_store import STARTED, ClusterConfigState, RestartRequest
from engine.connect.errors import REBALANCING, ConnectRestError, NotLeader, RebalanceStarted
from engine.connect.herder_requests import HerderRequests
from engine.connect.protocol import Assignment
from engine.connect.status_store import RESTARTING, Status
from engine.connect.worker import Worker

log = logging.getLogger("engine.connect.herder")

REQUEST_TIMEOUT = 90.0          # Connect's REST request timeout
_RECONFIGURE_BACKOFF = 0.25


class Herder(HerderRequests):
    def __init__(self, config, plugins, config_store, offset_store, status_store, *, kafka_cluster_id: str) -> None:
        self.config = config
        self.plugins = plugins
        self.config_store = config_store
        self.offset_store = offset_store
        self.status_store = status_store
        self.kafka_cluster_id = kafka_cluster_id
        self.url = ""
        self.worker: Worker | None = None
        self.membership = None
        self.leader_url: str | None = None
        self.is_leader_member = False
        self.generation = -1
        self.running_connectors: set[str] = set()
        self.running_tasks: set[tuple[str, int]] = set()
        self.snapshot = ClusterConfigState()      # the current view, for requests
        self._applied = ClusterConfigState()      # the view the last config changes were applied against
        self._lock = threading.Lock()
        self._requests: deque[tuple[object, Future]] = deque()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._updates: list[tuple[str, object]] = []
        self._reconfigure: dict[str, float] = {}      # connector -> when to try (monotonic)
        self._rejoin_at: float | None = None
        self._thread = threading.Thread(target=self._run, name="herder", daemon=True)
        self.started = threading.Event()

    # --- life --------------------------------------------------------------------------------

    def start(self, url: str, membership_factory) -> None:
        self.url = url
        worker_id = url.split("://", 1)[-1].rstrip("/")
        self.config_store.listeners.append(self._on_config_change)
        for store in (self.config_store, self.offset_store, self.status_store):
            store.start()
        self.snapshot = self._applied = self.config_store.snapshot()
        self.worker = Worker(self.config, worker_id, self.plugins, self.offset_store, self.status_store)
        self.worker.on_reconfiguration = self.request_reconfiguration
        self.membership = membership_factory(self)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(30)
        if self.worker is not None:
            self.worker.stop()
        if self.membership is not None:
            self.membership.close()
        for store in (self.status_store, self.offset_store, self.config_store):
            try:
                store.stop()
            except Exception:
                log.exception("Stopping a store failed")

    def wakeup(self) -> None:
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            try:
                self._tick()
            except Exception:
                log.exception("Uncaught exception in herder work thread; carrying on")
                time.sleep(0.5)

    def _tick(self) -> None:
        # A join in progress goes on in the group client; the herder comes back every second to
        # serve what it can and to see a stop.
        assignment = self.membership.poll(timeout_ms=1000)
        if assignment is not None:
            self._apply(assignment)
            self.started.set()
        if self._rejoin_at is not None and time.monotonic() >= self._rejoin_at:
            self._rejoin_at = None
            self.membership.request_rejoin()
        self._apply_config_updates()
        self._reconfigure_due()
        self._run_requests()
        wait = 0.5 if self._rejoin_at is None else max(0.0, min(0.5, self._rejoin_at - time.monotonic()))
        if self._reconfigure:
            wait = min(wait, _RECONFIGURE_BACKOFF)
        self._wake.wait(wait)
        self._wake.clear()

    # --- what the group client asks for (its network thread) ------------------------------------

    def config_offset(self) -> int:
        return self.config_store.snapshot().offset

    def running_work(self) -> tuple[list[str], list[tuple[str, int]]]:
        with self._lock:
            return sorted(self.running_connectors), sorted(self.running_tasks)

    def leader_snapshot(self, max_offset: int) -> ClusterConfigState | None:
        snapshot = self.config_store.snapshot()
        if snapshot.offset < max_offset:
            self.config_store.refresh(self.config["worker.sync.timeout.ms"] / 1000)
            snapshot = self.config_store.snapshot()
        return snapshot if snapshot.offset >= max_offset else None

    # --- assignments ------------------------------------------------------------------------------

    def _apply(self, a: Assignment) -> None:
        if a.failed:
            log.warning("Join group completed, but assignment failed. Reading to end of config and retrying.")
            self.config_store.refresh(self.config.values.get("worker.sync.timeout.ms", 3000) / 1000)
            self.membership.request_rejoin()
            return
        self.leader_url = a.leader_url
        self.is_leader_member = a.leader == self.membership.member_id
        self.generation = self.membership.generation
        self.worker.generation = self.generation
        if self.config_store.snapshot().offset < a.config_offset:
            log.info("Catching up to assignment's config offset.")
            self.config_store.refresh(self.config.values.get("worker.sync.timeout.ms", 3000) / 1000)
        self.snapshot = self.config_store.snapshot()
        if a.version == 0:       # eager: the assignment is everything this worker should run
            wanted_c, wanted_t = set(a.connectors), set(a.tasks)
            a.revoked_connectors = sorted(self.running_connectors - wanted_c)
            a.revoked_tasks = sorted(self.running_tasks - wanted_t)
            a.connectors = sorted(wanted_c - self.running_connectors)
            a.tasks = sorted(wanted_t - self.running_tasks)
        log.info("Joined group at generation %d as %s leader %s: assigned connectors %s tasks %s, revoked "
                 "connectors %s tasks %s, delay %d ms", self.generation, self.membership.member_id, a.leader_url,
                 a.connectors, [f"{c}-{t}" for c, t in a.tasks], a.revoked_connectors,
                 [f"{c}-{t}" for c, t in a.revoked_tasks], a.delay)
        revoked_tasks = [t for t in a.revoked_tasks if t in self.running_tasks]
        # A deleted connector's, or beyond its task configs (stopped, fewer tasks): no UNASSIGNED
        # after their tombstones, even when the rebalance comes before the config change here.
        gone = [t for t in revoked_tasks if self.snapshot.task_config(t) is None]
        self._stop_quietly(gone)
        self.worker.stop_tasks([t for t in revoked_tasks if t not in gone])
        for connector in a.revoked_connectors:
            self.worker.stop_connector(connector, unassigned=connector in self.snapshot.connector_configs)
        with self._lock:
            self.running_tasks -= set(a.revoked_tasks)
            self.running_connectors -= set(a.revoked_connectors)
        for connector in a.connectors:
            self._start_connector(connector)
        for task in a.tasks:
            self._start_task(task)
        if (a.revoked_connectors or a.revoked_tasks) and a.version >= 1:
            self.membership.request_rejoin()
        self._rejoin_at = time.monotonic() + a.delay / 1000 if a.delay > 0 else None

    def _start_connector(self, name: str) -> None:
        config = self.snapshot.connector_configs.get(name)
        if config is None:
            return
        with self._lock:
            self.running_connectors.add(name)
        state = self.snapshot.target_state(name)
        if self.worker.start_connector(name, config, state) and state == STARTED:
            self._reconfigure[name] = time.monotonic()

    def _start_task(self, task: tuple[str, int]) -> None:
        connector_config = self.snapshot.connector_configs.get(task[0])
        task_config = self.snapshot.task_config(task)
        if connector_config is None or task_config is None:
            return
        with self._lock:
            self.running_tasks.add(task)
        self.worker.start_task(task, connector_config, task_config, self.snapshot.target_state(task[0]))

    # --- config topic changes -------------------------------------------------------------------

    def _on_config_change(self, kind: str, item) -> None:
        with self._lock:
            self._updates.append((kind, item))
        self._wake.set()

    def _apply_config_updates(self) -> None:
        with self._lock:
            updates, self._updates = self._updates, []
        if not updates:
            return
        previous = self._applied
        self.snapshot = self._applied = self.config_store.snapshot()
        rejoin = False
        for kind, item in updates:
            if kind == "connector":
                rejoin |= self._connector_changed(item, previous)
            elif kind == "target_state":
                self._target_state_changed(item)
            elif kind == "tasks":
                rejoin |= self._tasks_changed(item, previous)
            elif kind == "restart":
                self._restart(item)
        if rejoin:
            self.membership.request_rejoin()

    def _connector_changed(self, name: str, previous: ClusterConfigState) -> bool:
        config = self.snapshot.connector_configs.get(name)
        if config is None:                   # deleted
            self._forget_connector(name)
            return True
        if name not in previous.connector_configs:
            return True                      # new: the leader assigns it
        if name in self.running_connectors and previous.connector_configs.get(name) != config:
            log.info("Handling connector-only config update by restarting connector %s", name)
            self.worker.stop_connector(name, unassigned=False)
            self._start_connector(name)
        return False

    def _forget_connector(self, name: str) -> None:
        mine = [t for t in self.running_tasks if t[0] == name]
        self._stop_quietly(mine)
        if name in self.worker.connectors:
            self.worker.connectors[name].failed = True
            self.worker.stop_connector(name, unassigned=False)
        with self._lock:
            self.running_tasks -= set(mine)
            self.running_connectors.discard(name)
        self._reconfigure.pop(name, None)

    def _stop_quietly(self, tasks: list[tuple[str, int]]) -> None:
        """Stop tasks that are gone and forget their statuses (Connect's DESTROYED)."""
        for runner in (self.worker.tasks.get(t) for t in tasks):
            if runner is not None:
                runner.quiet = True
        self.worker.stop_tasks(tasks)
        for task in tasks:
            self.status_store.put_task(task, None)

    def _target_state_changed(self, name: str) -> None:
        state = self.snapshot.target_state(name)
        if name in self.running_connectors:
            was_running = name in self.worker.connectors and self.worker.connectors[name].started
            self.worker.transition_connector(name, state)
            if state == STARTED and not was_running:
                self._reconfigure[name] = time.monotonic()
        self.worker.transition_tasks(name, state)

    def _tasks_changed(self, name: str, previous: ClusterConfigState) -> bool:
        old, new = previous.task_configs.get(name, []), self.snapshot.task_configs.get(name, [])
        for task in sorted(t for t in self.running_tasks if t[0] == name):
            if task[1] >= len(new) or (task[1] < len(old) and old[task[1]] != new[task[1]]):
                if task[1] >= len(new):
                    self._stop_quietly([task])
                else:
                    self.worker.stop_tasks([task])
                with self._lock:
                    self.running_tasks.discard(task)
                if task[1] < len(new):
                    self._start_task(task)
        return len(old) != len(new) or name in self.snapshot.inconsistent

    def _restart(self, request: RestartRequest) -> None:
        """Connect's doRestartConnectorAndTasks: the worker that runs what the plan covers stops
        it, marks it RESTARTING and starts it, so its statuses are written by one worker in order
        (a RESTARTING from the leader could land after the owner's RUNNING and stay)."""
        plan_connector, plan_tasks = self.restart_plan(request)
        connector = plan_connector and request.connector in self.running_connectors
        mine = [t for t in plan_tasks if t in self.running_tasks]
        if connector:
            self.worker.stop_connector(request.connector, unassigned=False)
            self.worker.connectors.pop(request.connector, None)
            self.status_store.put_connector(request.connector, self._restarting())
        self.worker.stop_tasks(mine)
        for task in mine:
            self.status_store.put_task(task, self._restarting())
        if connector:
            self._start_connector(request.connector)
        for task in mine:
            with self._lock:
                self.running_tasks.discard(task)
            self._start_task(task)

    def _restarting(self) -> Status:
        return Status(RESTARTING, self.worker.worker_id, self.generation)

    # --- task configs -----------------------------------------------------------------------------

    def request_reconfiguration(self, name: str) -> None:
        with self._lock:
            self._reconfigure[name] = time.monotonic()
        self._wake.set()

    def _reconfigure_due(self) -> None:
        # As in Connect, whose herder does nothing else until a rebalance completes: during one
        # the leader is not known for sure, and the new assignment may move the connector.
        if self.membership.rebalancing():
            return
        now = time.monotonic()
        for name, due in list(self._reconfigure.items()):
            if due > now:
                continue
            if name not in self.running_connectors or self.snapshot.target_state(name) != STARTED:
                self._reconfigure.pop(name, None)
                continue
            try:
                configs = self.worker.connector_task_configs(name)
                if configs is not None and configs != self.snapshot.task_configs.get(name):
                    self._write_task_configs(name, configs)
                self._reconfigure.pop(name, None)
            except Exception as exc:
                log.warning("Failed to reconfigure connector's tasks (%s), retrying after backoff: %s", name, exc)
                self._reconfigure[name] = now + _RECONFIGURE_BACKOFF * 4

    def _write_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        # The leader writes its own directly: its REST server would queue the forwarded request
        # behind this very thread, which would wait on it until the request timed out.
        if self.is_leader_member or (self.leader_url or "").rstrip("/") == self.url.rstrip("/"):
            self.config_store.put_task_configs(name, configs)
            return
        if not self.leader_url:
            raise ConnectRestError("No leader known yet")
        url = f"{self.leader_url.rstrip('/')}/connectors/{_quote(name)}/tasks?forward=true"
        request = urllib.request.Request(url, data=json.dumps(configs).encode(), method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            response.read()

    # --- requests from the REST API ---------------------------------------------------------------

    def is_leader(self) -> bool:
        return self.is_leader_member and not self.membership.rebalancing()

    def require_leader(self, what: str) -> None:
        if not self.is_leader():
            if self.membership.rebalancing() and self.is_leader_member:
                raise RebalanceStarted(REBALANCING)
            raise NotLeader(what, self.leader_url)

    def submit(self, fn, timeout: float = REQUEST_TIMEOUT):
        """Run `fn()` on the herder's thread and return its result (or raise its error)."""
        if threading.current_thread() is self._thread:
            return fn()
        future: Future = Future()
        with self._lock:
            self._requests.append((fn, future))
        self._wake.set()
        try:
            return future.result(timeout)
        except TimeoutError:
            raise ConnectRestError("Request timed out", 500) from None

    def _run_requests(self) -> None:
        """Run queued requests once the group is stable (a request that arrives during a
        rebalance waits for it, as in Connect, instead of failing)."""
        while self.started.is_set() and not self.membership.rebalancing():
            with self._lock:
                if not self._requests:
                    return
                fn, future = self._requests.popleft()
            if not future.running() and not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(fn())
            except RebalanceStarted:        # began since the check above: it waits for the rebalance
                with self._lock:
                    self._requests.appendleft((fn, future))
                return
            except BaseException as exc:
                future.set_exception(exc)
            self.snapshot = self.config_store.snapshot()


def _quote(name: str) -> str:
    from urllib.parse import quote
    return quote(name, safe="")
