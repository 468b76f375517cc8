"""The engine: one controller and N brokers sharing one event loop in one process.

Broker i listens on port P+i and keeps its logs in `<data dir>/broker-<i>/`; cluster
metadata lives in `<data dir>/__cluster_metadata/`.
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from engine.broker.broker import Broker
from engine.cluster.controller import Controller
from engine.config import BrokerConfig

log = logging.getLogger(__name__)


class Engine:
    def __init__(self, data_dir: Path | str, *, brokers: int = 3, host: str = "127.0.0.1", port: int = 9092,
                 configs: dict[str, Any] | None = None) -> None:
        self.data_dir = Path(data_dir)
        self.host = host
        self.ports = [port + i for i in range(brokers)]
        self.controller = Controller(self.data_dir / "__cluster_metadata", BrokerConfig(static=configs or {}))
        self.brokers = [Broker(i, host, p, self.data_dir / f"broker-{i}", self.controller)
                        for i, p in enumerate(self.ports)]

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(f"{self.host}:{p}" for p in self.ports)

    async def start(self) -> None:
        for broker in self.brokers:
            self.controller.register_broker(broker.node_id, broker.host, broker.port)
        for broker in self.brokers:
            await broker.start()
        log.info("Engine up: cluster %s, brokers %s", self.controller.image.cluster_id, self.bootstrap_servers)

    async def stop(self) -> None:
        for broker in self.brokers:
            await broker.stop()
        self.controller.shutdown()
        log.info("Engine stopped cleanly")
