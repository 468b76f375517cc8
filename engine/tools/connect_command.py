"""`python -m engine connect distributed WORKER.properties` and
`python -m engine connect standalone WORKER.properties [CONNECTOR.properties ...]`, in the
shape of connect-distributed.sh and connect-standalone.sh (engine/connect/runtime.py).

Exit 1 with Connect's sentence when the worker cannot start (a bad worker config, an
unreachable cluster, a config topic with several partitions, a connector that fails
validation in standalone mode).
"""
from __future__ import annotations

import argparse
import logging
import sys


def add_parser(commands) -> None:
    parser = commands.add_parser("connect", help="run a Kafka Connect worker (standalone or distributed)")
    modes = parser.add_subparsers(dest="connect_mode", required=True, metavar="MODE")
    distributed = modes.add_parser("distributed", help="a worker of a Connect cluster (connect-distributed.sh)")
    distributed.add_argument("worker_properties", metavar="WORKER.properties")
    standalone = modes.add_parser("standalone", help="a single worker (connect-standalone.sh)")
    standalone.add_argument("worker_properties", metavar="WORKER.properties")
    standalone.add_argument("connector_properties", metavar="CONNECTOR.properties", nargs="*")
    for sub in (distributed, standalone):
        sub.add_argument("--log-level", default="INFO", help="logging level (default INFO)")


def run(args: argparse.Namespace) -> int:
    from engine.connect.config_def import ConfigError
    from engine.connect.errors import ConnectRestError
    from engine.connect.runtime import run as run_worker
    from engine.connect.topic_log import TopicConfigError
    from kafka.errors import KafkaError

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="[%(asctime)s] %(levelname)s %(message)s (%(name)s)")
    logging.getLogger("kafka").setLevel(logging.WARNING)
    try:
        return run_worker(args.connect_mode, args.worker_properties, getattr(args, "connector_properties", []))
    except (ConfigError, TopicConfigError, ConnectRestError, KafkaError, OSError, TimeoutError) as exc:
        logging.getLogger("engine.connect").error("Stopping due to error: %s", exc)
        print(f"Stopping due to error: {exc}", file=sys.stderr)
        return 1
