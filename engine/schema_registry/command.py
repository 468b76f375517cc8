"""`python -m engine registry --bootstrap HOST:PORT --port 8081`: run one registry instance.

Start-up order: create or check `_schemas`, read it to its end, join the election, then
listen; `registry ready: URL` is printed once the port is bound and the store is loaded.
SIGTERM or SIGINT stops it cleanly (it leaves the group, so another instance takes over at
once instead of after the session timeout).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import ssl
import sys
from pathlib import Path

from aiohttp import web
from aiokafka.errors import KafkaError

from engine.schema_registry import auth, http_api
from engine.schema_registry.election import Election, Identity
from engine.schema_registry.kafka_store import KafkaSettings, KafkaStore, TopicError
from engine.schema_registry.registry import Registry
from engine.schema_registry.store import Store

log = logging.getLogger("engine.schema_registry")
SASL_PASSWORD_ENV = "REGISTRY_KAFKA_SASL_PASSWORD"


def add_parser(commands) -> None:
    parser = commands.add_parser("registry", help="run a Confluent-compatible schema registry")
    parser.add_argument("--bootstrap", required=True, help="Kafka brokers, host:port[,host:port]")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8081, help="HTTP(S) port (default 8081)")
    parser.add_argument("--advertised-host", default=None,
                        help="host other instances forward writes to (default: --host)")
    parser.add_argument("--topic", default="_schemas", help="the store topic (Confluent's kafkastore.topic)")
    parser.add_argument("--group-id", default="schema-registry",
                        help="the election group (Confluent's schema.registry.group.id)")
    parser.add_argument("--no-primary", action="store_true",
                        help="never become the primary (Confluent's leader.eligibility=false)")
    parser.add_argument("--session-timeout-ms", type=int, default=10000,
                        help="how long a silent primary keeps its place (default 10000)")
    parser.add_argument("--primary-wait-ms", type=int, default=20000,
                        help="how long a write waits for a primary during an election before 50004 (default 20000)")
    parser.add_argument("--auth-url", default=None,
                        help="the console's URL: HTTP basic credentials are checked against its users")
    parser.add_argument("--token-file", default=None,
                        help="bearer tokens, one 'ROLE TOKEN' a line (created with an admin token if missing)")
    parser.add_argument("--tls-cert", default=None, help="PEM certificate chain: serve HTTPS")
    parser.add_argument("--tls-key", default=None, help="PEM private key for --tls-cert")
    parser.add_argument("--tls-ca", default=None, help="CA file to verify other instances' HTTPS when forwarding")
    parser.add_argument("--kafka-security-protocol", default="PLAINTEXT",
                        choices=("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL"))
    parser.add_argument("--kafka-sasl-mechanism", default=None, choices=("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"))
    parser.add_argument("--kafka-sasl-username", default=None,
                        help=f"SASL user; the password comes from ${SASL_PASSWORD_ENV}")
    parser.add_argument("--log-level", default="INFO")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if bool(args.tls_cert) != bool(args.tls_key):
        print("error: --tls-cert and --tls-key go together", file=sys.stderr)
        return 2
    try:
        return asyncio.run(_serve(args))
    except (TopicError, KafkaError, OSError, ValueError, ssl.SSLError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def _server_ssl(args) -> ssl.SSLContext | None:
    if not args.tls_cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(args.tls_cert, args.tls_key)
    return context


async def _start_store(settings: KafkaSettings, store: Store) -> KafkaStore:
    """Connect, retrying while the cluster is not up yet (`make run` starts both at once)."""
    while True:
        kafka = KafkaStore(settings, store)
        try:
            await kafka.start()
            return kafka
        except (KafkaError, OSError) as exc:
            await kafka.stop()
            log.info("Waiting for Kafka at %s: %s", settings.bootstrap, exc)
            await asyncio.sleep(2)


async def _serve(args: argparse.Namespace) -> int:
    settings = KafkaSettings(args.bootstrap, args.topic, args.kafka_security_protocol, args.kafka_sasl_mechanism,
                             args.kafka_sasl_username, os.environ.get(SASL_PASSWORD_ENV))
    server_ssl = _server_ssl(args)
    tokens = auth.load_tokens(Path(args.token_file)) if args.token_file else None
    authenticator = auth.Authenticator(auth_url=args.auth_url, tokens=tokens)
    store = Store()
    kafka = await _start_store(settings, store)
    await kafka.catch_up(timeout=120)
    log.info("Read %s to offset %d: %d subjects, %d schemas", settings.topic, kafka.position, len(store.subjects),
             len(store.schemas))
    identity = Identity(args.advertised_host or args.host, args.port, "https" if server_ssl else "http",
                        not args.no_primary)
    election = Election(settings.client_kwargs(), args.group_id, identity, session_timeout_ms=args.session_timeout_ms,
                        heartbeat_interval_ms=max(100, min(1000, args.session_timeout_ms // 4)))
    await election.start()
    client_ssl = ssl.create_default_context(cafile=args.tls_ca) if args.tls_ca else True
    app = http_api.build_app(registry=Registry(store, kafka), kafka=kafka, election=election,
                             authenticator=authenticator, client_ssl=client_ssl,
                             primary_wait=args.primary_wait_ms / 1000)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, args.host, args.port, ssl_context=server_ssl)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await site.start()
        print(f"registry ready: {identity.url}", flush=True)
        await stop.wait()
    finally:
        await runner.cleanup()
        await election.stop()
        await authenticator.close()
        await kafka.stop()
    return 0
