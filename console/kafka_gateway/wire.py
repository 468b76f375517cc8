"""The wire helpers every call group of the gateway shares: connecting an admin client, sending
requests through kafka-python's connection manager, and the Metadata request and its decoding.

`client.Gateway` hands out the call groups (`groups.GroupCalls`, `quotas.QuotaCalls`,
`transactions.TransactionCalls`); they and the gateway import what they send with from here, so
no call group imports the module that hands it out. Why requests go through the connection
manager (`_manager`) rather than KafkaAdminClient's public calls: see `client.py`.
"""
from __future__ import annotations

import gc
import operator
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import kafka.errors as Errors
from kafka import KafkaAdminClient
from kafka.protocol.metadata import MetadataRequest

from console.kafka_gateway.bootstrap import answering_servers, server_list
from console.kafka_gateway.errors import GatewayError, readable
from console.kafka_gateway.login_failures import LoginFailures, refusal_text
from console.kafka_gateway.oauth_tokens import token_provider
from console.kafka_gateway.records import BrokerNode, ClusterMetadata, ConnectionSettings, PartitionInfo, TopicInfo
from console.kafka_gateway.sasl_logs import hide_sasl_credentials
from console.kafka_gateway.tls_check import tls_refusal
from console.kafka_gateway.tls_stores import TlsStoreError, ssl_context

_ZERO_UUID = uuid.UUID(int=0)
_BY_PARTITION = operator.attrgetter("partition")
_BY_NAME = operator.attrgetter("name")


def client_config(settings: ConnectionSettings, *, token_timeout_s: float = 10.0) -> dict:
    """What every kafka-python client of the console is given: the answering bootstrap servers
    (bootstrap.py), its client id, and the security settings (TLS: a context from the cluster's
    stores, tls_stores.py; GatewayError when they cannot be read; OAUTHBEARER: a token provider
    whose token is already got, oauth_tokens.py, waiting at most `token_timeout_s` for the
    token endpoint). kafka-python's debug log is kept free of the SASL credentials (sasl_logs.py)."""
    hide_sasl_credentials()
    config = {"bootstrap_servers": answering_servers(server_list(settings.bootstrap_servers)),
              "client_id": "kafka-console", "security_protocol": settings.security_protocol}
    if settings.uses_oauth:
        config.update(sasl_mechanism=settings.sasl_mechanism,
                      sasl_oauth_token_provider=token_provider(settings, timeout_s=token_timeout_s))
    elif settings.sasl_mechanism:
        config.update(sasl_mechanism=settings.sasl_mechanism, sasl_plain_username=settings.sasl_username,
                      sasl_plain_password=settings.sasl_password)
    if settings.uses_tls:
        try:
            config["ssl_context"] = ssl_context(settings)
        except TlsStoreError as exc:
            raise GatewayError(f"Cannot connect to {settings.bootstrap_servers}: {exc}.") from None
    return config


def connect(settings: ConnectionSettings, request_timeout_ms: int, bootstrap_timeout_ms: int) -> KafkaAdminClient:
    config = {**client_config(settings, token_timeout_s=bootstrap_timeout_ms / 1000),
              "request_timeout_ms": request_timeout_ms, "bootstrap_timeout_ms": bootstrap_timeout_ms}
    try:
        return _AdminClient(**config)
    except (Errors.KafkaError, OSError, ValueError) as exc:
        # kafka-python tells a TLS failure as a timeout: one handshake of our own says which.
        reason = tls_refusal(settings, config["bootstrap_servers"][0]) if settings.uses_tls else None
        raise GatewayError(f"Cannot connect to {settings.bootstrap_servers}: {reason or readable(exc)}") from exc


class _AdminClient(KafkaAdminClient):
    """KafkaAdminClient whose constructor cleans up after a failed bootstrap.

    The stock one starts its I/O thread before bootstrapping and leaks it when the bootstrap
    fails; a console page about a cluster that is down would leak one thread per request.
    A bootstrap that failed because the cluster refused the SASL login says so
    (login_failures.py) instead of "did not answer in time"."""

    def __init__(self, **configs):
        with LoginFailures() as failures:
            try:
                super().__init__(**configs)
            except BaseException as exc:
                io_thread = getattr(getattr(self, "_net", None), "_io_thread", None)
                refusal = failures.last_for(io_thread.ident if io_thread is not None else None)
                if hasattr(self, "_net"):
                    self._closed = False
                    self.close()
                if refusal is not None and isinstance(exc, Errors.KafkaError):
                    raise GatewayError(f"Cannot connect to {', '.join(configs['bootstrap_servers'])}: "
                                       f"{refusal_text(refusal)}.") from exc
                raise


def metadata_request(topics: Iterable[str] | None) -> MetadataRequest:
    """Metadata for these topics (all when None), never creating one."""
    wanted = None if topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in topics]
    return MetadataRequest(topics=wanted, allow_auto_topic_creation=False,
                           include_cluster_authorized_operations=False, include_topic_authorized_operations=False)


def cluster_metadata(response) -> ClusterMetadata:
    """From a decoded MetadataResponse; topics with an error (unknown ones) are left out."""
    brokers = tuple(sorted((BrokerNode(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
                            for b in response.brokers), key=lambda b: b.node_id))
    topics_info = sorted([_topic_info(t) for t in response.topics if t.error_code == 0], key=_BY_NAME)
    return ClusterMetadata(cluster_id=response.cluster_id, controller_id=response.controller_id,
                           brokers=brokers, topics=tuple(topics_info))


async def send(manager, request):
    return await manager.send(request)


async def send_to_each(manager, make_request, node_ids: list[int]) -> list:
    """One request per node, all in flight together; the responses in `node_ids` order."""
    futures = [manager.send(make_request(), node_id=node_id) for node_id in node_ids]
    return [await future for future in futures]


@contextmanager
def bulk_allocation() -> Iterator[None]:
    """Pause the cyclic GC while a large response is decoded and turned into records.

    20,000 partitions allocate a few hundred thousand acyclic objects; the collector would
    rescan the growing heap several times and double the time (measured: 120 ms -> 50 ms)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _topic_info(raw) -> TopicInfo:
    """From a decoded MetadataResponseTopic (fields a version lacks are decoded as defaults).

    Hot with thousands of topics: positional arguments and one list per topic keep 20,000
    partitions at ~50 ms; keyword arguments, getattr() and generators doubled it."""
    name = raw.name
    partitions = [PartitionInfo(name, p.partition_index, p.leader_id, tuple(p.replica_nodes), tuple(p.isr_nodes),
                                tuple(p.offline_replicas or ()), p.leader_epoch)
                  for p in raw.partitions]
    partitions.sort(key=_BY_PARTITION)
    topic_id = raw.topic_id
    return TopicInfo(name, bool(raw.is_internal), tuple(partitions),
                     str(topic_id) if topic_id and topic_id != _ZERO_UUID else None)


async def send_all(manager, requests: list[tuple[int | None, object]]) -> list:
    """Send every (node id, request) at once; the answers in order, an exception standing in
    for a request that failed, so one broker down does not lose the others' answers."""
    futures = [manager.send(request, node_id=node_id) for node_id, request in requests]
    answers = []
    for future in futures:
        try:
            answers.append(await future)
        except (Errors.KafkaError, OSError) as exc:
            answers.append(exc)
    return answers
