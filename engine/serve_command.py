"""`python -m engine serve`: a cluster of brokers in this process.

Broker i listens on port P+i, PLAINTEXT unless `--security-protocol` asks for SASL or TLS
(engine/security/settings.py); named listeners (`--listener NAME=PROTOCOL://HOST:PORT` or
Kafka's `listeners` configs) give each broker several (engine/security/listeners.py). SIGTERM or
SIGINT shuts down cleanly (flush, checkpoints, exit 0). A data dir another engine holds
(`DIR/.lock`) is refused: exit 1, nothing touched.
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import resource
import signal
import sys

from engine.config import InvalidConfigError
from engine.cluster.journal import MetadataCorruptError
from engine.security import listeners, scram_bootstrap, settings as security_settings
from engine.storage.dir_lock import DataDirLockedError


def _parse_config(values: list[str]) -> dict[str, str]:
    configs = {}
    for item in values:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise argparse.ArgumentTypeError(f"--config expects name=value, got {item!r}")
        configs[name.strip()] = value.strip()
    return configs


def _parse_racks(values: list[str], brokers: int) -> dict[int, str]:
    racks = {}
    for item in values:
        broker, sep, rack = item.partition("=")
        if not sep or not broker.strip().isdigit() or not rack.strip() or int(broker) >= brokers:
            raise argparse.ArgumentTypeError(f"--rack expects ID=RACK with ID in 0..{brokers - 1}, got {item!r}")
        racks[int(broker)] = rack.strip()
    return racks


def _listener_configs(args: argparse.Namespace, configs: dict[str, str]) -> dict[str, str]:
    """`--listener NAME=PROTOCOL://HOST:PORT` options joined to the `listeners` and
    `listener.security.protocol.map` configs (Kafka's form)."""
    if args.listener:
        if "listeners" in configs:
            raise InvalidConfigError("give the listeners either with --listener or with --config listeners=, not both")
        pairs = [listeners.parse_listener_option(value) for value in args.listener]
        configs["listeners"] = ",".join(endpoint for endpoint, _ in pairs)
        mapped = configs.get("listener.security.protocol.map", "")
        configs["listener.security.protocol.map"] = ",".join(filter(None, [mapped, *(m for _, m in pairs)]))
    if args.inter_broker_listener:
        configs["inter.broker.listener.name"] = args.inter_broker_listener
    return configs


def add_parser(commands) -> None:
    serve = commands.add_parser("serve", help="run a cluster of brokers in this process")
    serve.add_argument("--data-dir", required=True, help="directory for logs and cluster metadata")
    serve.add_argument("--brokers", type=int, default=3, help="number of brokers (default 3)")
    serve.add_argument("--host", default="127.0.0.1", help="listen and advertised host (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=9092, help="port of broker 0; broker i uses port+i")
    serve.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                       help="broker config override, Kafka names (e.g. num.partitions=3); repeatable")
    serve.add_argument("--admin-port", type=int, default=None,
                       help="port of the engine's admin interface (default: the port after the last broker)")
    serve.add_argument("--admin-host", default="127.0.0.1",
                       help="address the admin interface binds to (default 127.0.0.1: loopback only)")
    serve.add_argument("--no-admin", action="store_true",
                       help="run without the admin interface (broker stop/start over HTTP); nothing is advertised")
    serve.add_argument("--metrics-port", type=int, default=None, metavar="P",
                       help="serve broker i's Prometheus metrics on port P+i at /metrics (default: none)")
    serve.add_argument("--metrics-host", default="127.0.0.1",
                       help="address the metrics endpoints bind to (default 127.0.0.1)")
    serve.add_argument("--rack", action="append", default=[], metavar="ID=RACK",
                       help="broker.rack of broker ID (Kafka's rack-aware placement reads it); repeatable")
    serve.add_argument("--security-protocol", default="PLAINTEXT", choices=security_settings.PROTOCOLS,
                       help="the protocol of the one listener there is without --listener / listeners= "
                            "(default PLAINTEXT: no TLS, no login)")
    serve.add_argument("--listener", action="append", default=[], metavar="NAME=PROTOCOL://HOST:PORT",
                       help="a named listener (Kafka's listeners and listener.security.protocol.map); broker i "
                            "listens on PORT+i; repeatable")
    serve.add_argument("--inter-broker-listener", default=None, metavar="NAME",
                       help="the listener the brokers replicate through (inter.broker.listener.name)")
    serve.add_argument("--sasl-users-file", default=None, metavar="FILE",
                       help="SASL/PLAIN users, one user_<name>=<password> a line (docs/engine/authentication.md)")
    serve.add_argument("--add-scram", action="append", default=[], metavar="'SCRAM-SHA-256=[name=N,password=P]'",
                       help="a SCRAM user to add if missing (kafka-storage's syntax); repeatable")
    serve.add_argument("--add-scram-file", default=None, metavar="FILE",
                       help="--add-scram values, one a line, from a file (keeps passwords off the command line)")
    serve.add_argument("--log-level", default="INFO")


def raise_open_files_limit() -> None:
    """Thousands of partitions and connections need descriptors: take the hard limit, as
    Kafka's start scripts advise, and split it (engine/resources.py)."""
    from engine.resources import DESCRIPTORS
    from engine.storage import file_handles
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    DESCRIPTORS.configure()
    file_handles.HANDLES.limit = DESCRIPTORS.segment_files


async def serve(args: argparse.Namespace) -> int:
    from engine.runtime import Engine

    raise_open_files_limit()

    configs = _parse_config(args.config)
    scram_users = [scram_bootstrap.parse(value) for value in args.add_scram]
    if args.add_scram_file:
        scram_users += scram_bootstrap.parse_file(args.add_scram_file)
    listener_configs = _listener_configs(args, listeners.take_listener_configs(configs))
    named, inter_broker = listeners.build(listener_configs, security_settings.take_security_configs(configs),
                                          host=args.host, port=args.port, brokers=args.brokers,
                                          default_protocol=args.security_protocol, users_file=args.sasl_users_file)
    engine = Engine(args.data_dir, brokers=args.brokers, host=args.host, port=args.port,
                    configs=configs, admin_port=args.admin_port,
                    admin=not args.no_admin, admin_host=args.admin_host,
                    racks=_parse_racks(args.rack, args.brokers), listeners=named, inter_broker_listener=inter_broker,
                    metrics_port=args.metrics_port, metrics_host=args.metrics_host)
    added = scram_bootstrap.add_missing(engine.controller, scram_users)
    if added:
        logging.getLogger("engine").info("Added SCRAM credentials for %s (--add-scram)", ", ".join(added))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await engine.start()
    print(f"engine ready: {engine.bootstrap_servers}", flush=True)
    await stop.wait()
    await engine.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.brokers < 1:
        print("--brokers must be at least 1", file=sys.stderr)
        return 2
    try:
        return asyncio.run(serve(args))
    except MetadataCorruptError as exc:
        logging.getLogger("engine").error("%s", exc)
        return 1
    except DataDirLockedError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (InvalidConfigError, argparse.ArgumentTypeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

