"""Starting and stopping a worker, as connect-distributed.sh and connect-standalone.sh do:
read the worker properties, load the plugins, open the stores (the three compacted topics in
distributed mode; memory and the offsets file in standalone mode), start the herder, serve
the REST API, and on SIGTERM or SIGINT stop the tasks (committing their offsets), leave the
group and exit.
"""
from __future__ import annotations

import logging
import signal
import threading
import time

import kafka.errors as Errors

from kafka.admin import KafkaAdminClient

from engine.connect import properties
from engine.connect.config_store import ConfigStore, KafkaConfigStore
from engine.connect.herder import Herder
from engine.connect.membership import GroupMembership, SoleMembership
from engine.connect.offset_store import FileOffsetStore, KafkaOffsetStore
from engine.connect.plugins import Plugins
from engine.connect.rest import RestServer
from engine.connect.status_store import KafkaStatusStore, StatusStore
from engine.client_settings import kafka_python_settings
from engine.connect.worker_config import WorkerConfig

log = logging.getLogger("engine.connect")


CLUSTER_WAIT_SECONDS = 60      # Connect waits default.api.timeout.ms (60 s) for the cluster id


def _cluster_id(config: WorkerConfig) -> str:
    """The Kafka cluster's id; a cluster that is still starting is waited for, as Connect does."""
    deadline = time.monotonic() + CLUSTER_WAIT_SECONDS
    while True:
        try:
            settings = kafka_python_settings(config.client_settings("admin"))
            admin = KafkaAdminClient(client_id="connect-cluster-id", request_timeout_ms=30000,
                                     bootstrap_timeout_ms=5000, **settings)
        except Errors.KafkaTimeoutError:
            if time.monotonic() > deadline:
                raise
            log.info("Waiting for the Kafka cluster at %s", config.bootstrap_servers)
            time.sleep(1.0)
            continue
        try:
            return admin.describe_cluster().get("cluster_id") or ""
        finally:
            admin.close()


class ConnectWorker:
    """A running worker: its herder and its REST server."""

    def __init__(self, herder: Herder, rest: RestServer) -> None:
        self.herder, self.rest = herder, rest

    @property
    def url(self) -> str:
        return self.herder.url

    def stop(self) -> None:
        log.info("Kafka Connect stopping")
        self.rest.stop()
        self.herder.stop()
        log.info("Kafka Connect stopped")


def start_distributed(props: dict[str, str]) -> ConnectWorker:
    config = WorkerConfig(props, distributed=True)
    plugins = Plugins(config["plugin.path"])
    settings = config.client_settings()
    client_id = config["client.id"] or f"connect-{config['group.id']}"
    cluster_id = _cluster_id(config)         # first: the cluster may still be starting
    herder = Herder(
        config, plugins,
        KafkaConfigStore(config["config.storage.topic"], settings,
                         replication_factor=config["config.storage.replication.factor"], client_id=client_id),
        KafkaOffsetStore(config["offset.storage.topic"], settings, partitions=config["offset.storage.partitions"],
                         replication_factor=config["offset.storage.replication.factor"], client_id=client_id),
        KafkaStatusStore(config["status.storage.topic"], settings, partitions=config["status.storage.partitions"],
                         replication_factor=config["status.storage.replication.factor"], client_id=client_id),
        kafka_cluster_id=cluster_id)
    return _serve(config, herder, lambda h: GroupMembership(h, config))


def start_standalone(props: dict[str, str], connectors: list[dict[str, str]]) -> ConnectWorker:
    config = WorkerConfig(props, distributed=False)
    cluster_id = _cluster_id(config)
    herder = Herder(config, Plugins(config["plugin.path"]), ConfigStore(),
                    FileOffsetStore(config["offset.storage.file.filename"]), StatusStore(),
                    kafka_cluster_id=cluster_id)
    worker = _serve(config, herder, SoleMembership)
    for connector in connectors:
        name = connector.get("name", "")
        herder.put_connector_config(name, connector, allow_replace=True)
        log.info("Created connector %s", name)
    return worker


def _serve(config: WorkerConfig, herder: Herder, membership_factory) -> ConnectWorker:
    host, port = config.listener()
    rest = RestServer(herder, host, port)
    herder.start(config.advertised_url(rest.port), membership_factory)
    rest.start()
    log.info("REST server listening at %s, advertising URL %s", f"http://{host}:{rest.port}/", herder.url)
    log.info("Kafka Connect started")
    return ConnectWorker(herder, rest)


def run(mode: str, worker_properties: str, connector_properties: list[str]) -> int:
    props = properties.load(worker_properties)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    if mode == "distributed":
        worker = start_distributed(props)
    else:
        worker = start_standalone(props, [properties.load(p) for p in connector_properties])
    print(f"connect ready: {worker.url}", flush=True)
    stop.wait()
    worker.stop()
    return 0
