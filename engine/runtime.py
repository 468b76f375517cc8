"""The engine: one controller and N brokers sharing one asyncio event loop in one process.

Broker i listens on port P+i (on each named listener: its port + i, engine/security/listeners.py)
and keeps its logs in `<data dir>/broker-<i>/`; cluster
metadata lives in `<data dir>/__cluster_metadata/`. The engine holds `<data dir>/.lock` from
its construction to the end of `stop()` (engine/storage/dir_lock.py): a second engine on the
same data dir refuses to start and touches nothing. Single brokers can be stopped and
started while the rest run (`stop_broker` / `start_broker`): a stopping broker first hands
its leaderships to other in-sync replicas (controlled shutdown), then closes its listener.
"""
from __future__ import annotations

import asyncio
import gc
import logging
from pathlib import Path
from typing import Any

from engine import admin_token
from engine.admin_server import AdminServer
from engine.broker.broker import Broker
from engine.cluster.controller import Controller
from engine.config import BrokerConfig
from engine.heap import HeapFreezer
from engine.metrics.server import MetricsServer
from engine.storage.dir_lock import DirLock
import engine.protocol.apis  # noqa: F401 - registers every API handler: an Engine serves them all
from engine.protocol.inter_broker import InterBrokerNetwork
from engine.protocol.listener import Listener
from engine.protocol.response_cache import ImageResponseCache
from engine.security import authorizer
from engine.security.listeners import ListenerConfig
from engine.security.settings import SecuritySettings

log = logging.getLogger(__name__)

WARM_DELAY_S = 0.2     # quiet time after a metadata change before polled answers are rebuilt


class Engine:
    def __init__(self, data_dir: Path | str, *, brokers: int = 3, host: str = "127.0.0.1", port: int = 9092,
                 configs: dict[str, Any] | None = None, admin_port: int | None = None, admin: bool = True,
                 admin_host: str = "127.0.0.1", racks: dict[int, str] | None = None,
                 security: SecuritySettings | None = None, listeners: list[ListenerConfig] | None = None,
                 inter_broker_listener: str | None = None, metrics_port: int | None = None,
                 metrics_host: str = "127.0.0.1") -> None:
        self.data_dir = Path(data_dir)
        self.dir_lock = DirLock(self.data_dir)
        self.dir_lock.acquire()     # before anything reads or writes the data dir
        try:
            self._build(brokers=brokers, host=host, port=port, configs=configs, admin_port=admin_port,
                        admin=admin, admin_host=admin_host, racks=racks, security=security, listeners=listeners,
                        inter_broker_listener=inter_broker_listener)
            # Broker i's metrics on metrics_port+i (engine/metrics/server.py), as its listener on port+i.
            self.metrics_servers = {b.node_id: MetricsServer(b, metrics_host, metrics_port + b.node_id)
                                    for b in self.brokers} if metrics_port is not None else {}
        except BaseException:
            self.dir_lock.release()
            raise

    def _build(self, *, brokers: int, host: str, port: int, configs: dict[str, Any] | None,
               admin_port: int | None, admin: bool, admin_host: str, racks: dict[int, str] | None,
               security: SecuritySettings | None, listeners: list[ListenerConfig] | None,
               inter_broker_listener: str | None) -> None:
        self.racks = dict(racks or {})     # broker.rack per broker id, advertised in Metadata
        # Named listeners (engine/security/listeners.py); without them, one on host:port whose
        # TLS / SASL is `security` (engine/security/settings.py), PLAINTEXT unless asked.
        if listeners is None:
            security = security or SecuritySettings()
            listeners = [ListenerConfig(security.listener or security.protocol, host, port, host, port, security)]
        self.listener_configs = listeners
        self.inter_broker_listener = inter_broker_listener or listeners[0].name
        self.security = listeners[0].security       # the first listener's, where bootstrap_servers point
        first = listeners[0]
        self.host = first.advertised_host
        self.ports = [first.advertised_port_of(i) for i in range(brokers)]   # the first listener's: bootstrap_servers
        self.controller = Controller(self.data_dir / "__cluster_metadata", BrokerConfig(static=configs or {}))
        self.brokers = [Broker(i, first.host, first.port_of(i), self.data_dir / f"broker-{i}", self.controller)
                        for i in range(brokers)]
        for config in listeners:
            config.security.scram_lookup = self.controller.scram_credential
        # The brokers reach each other over socket pairs no client can reach (engine/protocol/inter_broker.py),
        # served by the inter-broker listener, whose name their requests carry.
        self.inter_broker = InterBrokerNetwork()
        for broker in self.brokers:
            broker.listeners = [Listener(broker, c.host, c.port_of(broker.node_id), c.security,
                                         inter_broker=c.name == self.inter_broker_listener) for c in listeners]
            broker.listener = broker.listeners[0]
            broker.inter_broker = self.inter_broker
            self.inter_broker.attach(broker.node_id, next(
                listener for listener, c in zip(broker.listeners, listeners) if c.name == self.inter_broker_listener))
        port = max(c.port for c in listeners)
        # ACLs (KIP-801): one authorizer over the image's ACLs serves every broker; None: off.
        self.authorizer = authorizer.build(self.controller.broker_config, self.controller.image.acls)
        for broker in self.brokers:
            broker.authorizer = self.authorizer
        # admin=False: no admin interface, and nothing advertised; to clients the cluster is plain Kafka.
        # The admin interface binds to loopback unless told otherwise, and wants the token of
        # <data dir>/admin.token (engine/admin_token.py).
        self.admin = AdminServer(self, admin_host, port + brokers if admin_port is None else admin_port,
                                 admin_token.load_or_create(self.data_dir)) if admin else None
        for broker in self.brokers:
            broker.admin_endpoint = self.admin.endpoint if self.admin else None
        self._rebalancer: asyncio.Task | None = None   # created once start() has gone through
        self.heap = HeapFreezer(self.controller)
        # Every broker answers the all-topics Metadata with the same bytes: one cache for all
        # of them builds it once per image instead of once per broker (0.3 s at 40,000 partitions).
        self.response_cache = ImageResponseCache()
        for broker in self.brokers:
            broker.response_cache = self.response_cache
        self._warming: asyncio.TimerHandle | None = None

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{p}" for p in self.ports)

    def bootstrap_for(self, listener: str) -> str:
        """The brokers' advertised endpoints on one listener, host:port,host:port..."""
        return ",".join("%s:%d" % self._endpoint(b.node_id, listener) for b in self.brokers)

    def _endpoint(self, node_id: int, listener: str) -> tuple[str, int]:
        config = next(c for c in self.listener_configs if c.name == listener)
        return config.advertised_host, config.advertised_port_of(node_id)

    def broker(self, node_id: int) -> Broker:
        if not 0 <= node_id < len(self.brokers):
            raise KeyError(f"no broker {node_id} (this engine has brokers 0-{len(self.brokers) - 1})")
        return self.brokers[node_id]

    async def start(self) -> None:
        # The cyclic GC stays off while start-up builds its ~40 objects per partition: each full
        # collection walks all of them so far, and they all live on (frozen at the end).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            await self._start()
        finally:
            if gc_was_enabled:
                gc.enable()

    async def _start(self) -> None:
        for broker in self.brokers:
            self.controller.register_broker(broker.node_id, *self._endpoint(broker.node_id, self.inter_broker_listener),
                                            self.racks.get(broker.node_id), endpoints=tuple(
                                                (c.name, *self._endpoint(broker.node_id, c.name))
                                                for c in self.listener_configs))
        self.controller.elect_controller()
        # All logs recovered before anyone leads or fetches. One log dir after the other: the
        # loading is mostly Python work, and more threads than a dir's own only fight over the
        # GIL (3 dirs at once took 17 s where one after the other took 10 s at 40,000 partitions).
        for broker in self.brokers:
            broker.load_logs()
        self.controller.elect_longest_logs({b.node_id: b.recovered_replicas() for b in self.brokers})
        for broker in self.brokers:
            await broker.start()
        for broker in self.brokers:
            self.controller.unfence_broker(broker.node_id)
        if self.admin:
            await self.admin.start()
        for server in self.metrics_servers.values():
            await server.start()
        self.controller.restoring_preferred_leaders = True
        self._rebalancer = asyncio.create_task(self._rebalance_leaders_periodically())
        # The recovered state is long-lived: out of the cyclic GC's way (engine/heap.py).
        self.heap.freeze()
        self.controller.add_listener(self.heap.on_metadata_change)
        self.controller.add_listener(self._warm_responses_soon)
        log.info("Engine up: cluster %s, brokers %s", self.controller.image.cluster_id, self.bootstrap_servers)

    def _warm_responses_soon(self, changed, deleted, epoch) -> None:
        """After a metadata change, once changes stop for WARM_DELAY_S, build the answers that
        were polled lately (the all-topics Metadata: ~0.5 s at 40,000 partitions) for the new
        image, so the console's next page does not wait for it."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:          # a commit outside the loop (tests driving the controller)
            return
        if self._warming is not None:
            self._warming.cancel()
        self._warming = loop.call_later(WARM_DELAY_S, self._warm_responses)

    def _warm_responses(self) -> None:
        self._warming = None
        built = self.response_cache.warm(self.controller.image)
        if built:
            log.debug("Built %d cached answer(s) for metadata image %d", built, self.controller.image.version)

    async def _rebalance_leaders_periodically(self) -> None:
        config = self.controller.broker_config
        while True:
            await asyncio.sleep(config.get("leader.imbalance.check.interval.seconds"))
            self.controller.restoring_preferred_leaders = False
            if config.get("auto.leader.rebalance.enable"):
                moved = self.controller.rebalance_leaders()
                if moved:
                    log.info("Auto leader rebalance moved %d leaderships back to preferred replicas", moved)

    async def stop_broker(self, node_id: int) -> bool:
        """Controlled shutdown of one broker; False if it was already stopped."""
        broker = self.broker(node_id)
        if not broker.running:
            return False
        self.controller.fence_broker(node_id)
        await broker.stop()
        if node_id in self.metrics_servers:     # a stopped broker is not scraped, as a dead one
            await self.metrics_servers[node_id].stop()
        log.info("Broker %d stopped", node_id)
        return True

    async def start_broker(self, node_id: int) -> bool:
        """Start a stopped broker; its replicas catch up from the leaders and rejoin the ISR."""
        broker = self.broker(node_id)
        if broker.running:
            return False
        await broker.start()
        self.controller.unfence_broker(node_id)
        broker.resync()   # now that it is live again, its follower replicas may fetch
        if node_id in self.metrics_servers:
            await self.metrics_servers[node_id].start()
        log.info("Broker %d started", node_id)
        return True

    async def stop(self) -> None:
        """SIGTERM: a controlled shutdown of each broker in turn, so leadership moves to the ones
        still running and clients are served until the last broker stops. A partition whose
        leadership has nowhere to go keeps its leader, as the last broker's partitions do
        (RC.fence_records' `keep_stranded`). At the next start the preferred replicas take
        their leadership back as soon as they are in sync again."""
        if self.admin:
            await self.admin.stop()
        for server in self.metrics_servers.values():
            await server.stop()
        if self._warming is not None:
            self._warming.cancel()
        if self._rebalancer is not None:      # None: start() failed (a port taken) or never ran
            self._rebalancer.cancel()
            await asyncio.gather(self._rebalancer, return_exceptions=True)
        running = [b for b in self.brokers if b.running]
        for broker in running[:-1]:
            self.controller.fence_broker(broker.node_id, keep_stranded=True)
            await broker.stop()
            log.info("Broker %d stopped", broker.node_id)
        for broker in running[-1:]:
            await broker.stop()
        self.controller.shutdown()
        self.dir_lock.release()
        log.info("Engine stopped cleanly")
