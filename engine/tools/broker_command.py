"""`python -m engine broker list|stop|start [ID] (--bootstrap HOST:PORT | --admin HOST:PORT)
[--admin-token-file FILE]`.

Stops or starts one broker of a running engine through its admin interface. With
--bootstrap the admin endpoint is found over the Kafka protocol: brokers advertise it as
the read-only broker config `engine.admin.endpoint`. The admin token comes from
--admin-token-file (the engine writes `<data dir>/admin.token`) or `ENGINE_ADMIN_TOKEN`.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request

from engine import admin_token

ADMIN_ENDPOINT_CONFIG = "engine.admin.endpoint"


def add_parser(commands) -> None:
    parser = commands.add_parser("broker", help="list, stop or start brokers of a running engine")
    parser.add_argument("action", choices=["list", "stop", "start"])
    parser.add_argument("broker_id", type=int, nargs="?", help="broker id (stop/start)")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--bootstrap", help="any live broker, host:port")
    where.add_argument("--admin", help="the engine's admin endpoint, host:port")
    parser.add_argument("--admin-token-file", help="file holding the admin token (the engine writes "
                        f"<data dir>/{admin_token.FILE_NAME}); default: ${admin_token.ENV}")


def token_of(args: argparse.Namespace) -> str:
    if args.admin_token_file:
        return admin_token.read_token(args.admin_token_file)
    token = os.environ.get(admin_token.ENV)
    if not token:
        raise RuntimeError(f"no admin token: pass --admin-token-file <data dir>/{admin_token.FILE_NAME} "
                           f"or set {admin_token.ENV}")
    return token


def admin_endpoint_from_bootstrap(bootstrap: str) -> str:
    from kafka import KafkaAdminClient
    from kafka.admin import ConfigResource, ConfigResourceType

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=10000)
    try:
        broker_id = min(b["broker_id"] for b in admin.describe_cluster()["brokers"])
        resource = ConfigResource(ConfigResourceType.BROKER, str(broker_id), [ADMIN_ENDPOINT_CONFIG])
        answer = admin.describe_configs([resource], config_filter="all")
    finally:
        admin.close()
    entry = answer.get("broker", {}).get(str(broker_id), {}).get(ADMIN_ENDPOINT_CONFIG) or {}
    if not entry.get("value"):
        raise RuntimeError(f"the cluster at {bootstrap} does not advertise {ADMIN_ENDPOINT_CONFIG}: not our engine?")
    return entry["value"]


def call(endpoint: str, method: str, path: str, token: str):
    url = endpoint.rstrip("/") + path
    if not url.startswith("http"):
        url = "http://" + url
    request = urllib.request.Request(url, method=method, data=b"" if method == "POST" else None,
                                     headers={admin_token.HEADER: token})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise RuntimeError(json.loads(exc.read()).get("error", str(exc))) from None


def run(args: argparse.Namespace) -> int:
    if args.action != "list" and args.broker_id is None:
        print("error: stop and start need a broker id", file=sys.stderr)
        return 2
    try:
        token = token_of(args)
        endpoint = args.admin or admin_endpoint_from_bootstrap(args.bootstrap)
        if args.action == "list":
            for broker in call(endpoint, "GET", "/brokers", token):
                state = "running" if broker["running"] else "stopped"
                print(f"{broker['id']}\t{broker['host']}:{broker['port']}\t{state}")
            return 0
        result = call(endpoint, "POST", f"/brokers/{args.broker_id}/{args.action}", token)
    except (RuntimeError, OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    state = "running" if result["running"] else "stopped"
    note = "" if result["changed"] else f" (already {state})"
    print(f"broker {result['id']} {state}{note}")
    return 0
