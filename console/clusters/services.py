"""Writes for clusters: registering them, and remembering the brokers seen in them."""
from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.utils import timezone

from console.accounts.services import audited
from console.clusters.models import Cluster, KnownBroker
from console.errors import InvalidInput
from console.events import notify_on_commit
from console.kafka_gateway import BrokerNode, EngineBroker

BUNDLED_NAME = "local engine"
LAST_SEEN_PRECISION = timedelta(minutes=1)


def cluster_create(*, name: str, bootstrap_servers: str, security_protocol: str = "PLAINTEXT",
                   sasl_mechanism: str = "", sasl_username: str = "", sasl_password_env: str = "",
                   oauth_token_endpoint_url: str = "", oauth_client_id: str = "", oauth_client_secret_env: str = "",
                   oauth_scope: str = "", admin_token_env: str = "", **tls: str) -> Cluster:
    """`tls`: ssl_cafile, ssl_certfile, ssl_keyfile, ssl_key_password_env (Cluster's fields).
    The oauth_* fields are SASL OAUTHBEARER's (the client credentials grant)."""
    cluster = Cluster(name=name, bootstrap_servers=bootstrap_servers, security_protocol=security_protocol,
                      sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
                      sasl_password_env=sasl_password_env, oauth_token_endpoint_url=oauth_token_endpoint_url,
                      oauth_client_id=oauth_client_id, oauth_client_secret_env=oauth_client_secret_env,
                      oauth_scope=oauth_scope, admin_token_env=admin_token_env, **_tls_fields(tls))
    cluster.full_clean()
    cluster.save()
    return cluster


TLS_FIELDS = ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_key_password_env")


def _tls_fields(tls: dict[str, str]) -> dict[str, str]:
    unknown = set(tls) - set(TLS_FIELDS)
    if unknown:
        raise TypeError(f"not TLS fields of a cluster: {', '.join(sorted(unknown))}")
    return tls


LEGACY_BUNDLED_BOOTSTRAP = "127.0.0.1:9092"   # before every broker was listed: one stopped broker broke it


def cluster_register_bundled(*, bootstrap_servers: str, follow: bool = True, using: str = "default",
                             login: dict | None = None) -> Cluster:
    """The bundled engine's row: created once. Its bootstrap list follows `bootstrap_servers`
    when `follow` (ENGINE_BOOTSTRAP was set) or when it is still the old single-broker default;
    otherwise an admin's edit stays. `login` (security_protocol, sasl_mechanism, sasl_username,
    sasl_password_env), when given, is the row's: `make run SECURE=1` logs the console in."""
    cluster = Cluster.objects.using(using).filter(is_bundled=True).first()
    if cluster is None:
        return Cluster.objects.using(using).create(name=BUNDLED_NAME, bootstrap_servers=bootstrap_servers,
                                                   is_bundled=True, **(login or {}))
    changed = [name for name, value in (login or {}).items() if getattr(cluster, name) != value]
    for name in changed:
        setattr(cluster, name, login[name])
    if (follow or cluster.bootstrap_servers == LEGACY_BUNDLED_BOOTSTRAP) and \
            cluster.bootstrap_servers != bootstrap_servers:
        cluster.bootstrap_servers = bootstrap_servers
        changed.append("bootstrap_servers")
    if changed:
        cluster.save(using=using, update_fields=changed)
    return cluster


def cluster_add(*, actor, name: str, bootstrap_servers: str, security_protocol: str = "PLAINTEXT",
                sasl_mechanism: str = "", sasl_username: str = "", sasl_password_env: str = "",
                oauth_token_endpoint_url: str = "", oauth_client_id: str = "", oauth_client_secret_env: str = "",
                oauth_scope: str = "", admin_token_env: str = "", **tls: str) -> Cluster:
    """Register a cluster from the console (admins), audited (the names of secrets' variables,
    never a secret). Nothing is asked of the cluster here: one that does not answer yet is
    still worth registering, and its overview says so."""
    oauth = {"oauth_token_endpoint_url": oauth_token_endpoint_url, "oauth_client_id": oauth_client_id,
             "oauth_client_secret_env": oauth_client_secret_env, "oauth_scope": oauth_scope}
    with audited(actor=actor, cluster=None, action="cluster.add", target=name,
                 details={"bootstrap_servers": bootstrap_servers, "security_protocol": security_protocol,
                          "sasl_mechanism": sasl_mechanism, **{k: v for k, v in {**oauth, **tls}.items() if v}}):
        try:
            return cluster_create(name=name, bootstrap_servers=bootstrap_servers, security_protocol=security_protocol,
                                  sasl_mechanism=sasl_mechanism, sasl_username=sasl_username,
                                  sasl_password_env=sasl_password_env, admin_token_env=admin_token_env, **oauth,
                                  **tls)
        except ValidationError as exc:
            raise InvalidInput(_messages(exc)) from None


EDITABLE = ("name", "bootstrap_servers", "security_protocol", "sasl_mechanism", "sasl_username",
            "sasl_password_env", *Cluster.OAUTH_FIELDS, "admin_token_env", *TLS_FIELDS)


def cluster_update(*, actor, cluster: Cluster, **changes: str) -> Cluster:
    """Edit a registered cluster (the bundled engine's bootstrap list too), audited with the
    fields that changed. Secrets are not among them: only the names of their variables."""
    unknown = set(changes) - set(EDITABLE)
    if unknown:
        raise InvalidInput(f"Cannot edit {', '.join(sorted(unknown))}.")
    changed = {k: v for k, v in changes.items() if getattr(cluster, k) != v}
    with audited(actor=actor, cluster=cluster, action="cluster.update", target=cluster.name,
                 details={"changed": {k: [getattr(cluster, k), v] for k, v in changed.items()}}):
        for name, value in changed.items():
            setattr(cluster, name, value)
        try:
            cluster.full_clean()
        except ValidationError as exc:
            cluster.refresh_from_db()
            raise InvalidInput(_messages(exc)) from None
        cluster.save()
    notify_on_commit("cluster.updated", {"cluster": cluster.pk})
    return cluster


def _messages(exc: ValidationError) -> str:
    return " ".join(m for messages in exc.message_dict.values() for m in messages)


def cluster_remove(*, actor, cluster: Cluster, confirmation: str) -> None:
    """Forget a registered cluster (nothing on the cluster changes). The bundled engine stays."""
    with audited(actor=actor, cluster=cluster, action="cluster.remove", target=cluster.name, details={}):
        if cluster.is_bundled:
            raise InvalidInput("The bundled engine cannot be removed: `make run` registers it at every start.")
        if confirmation != cluster.name:
            raise InvalidInput(f"Type the cluster's name, {cluster.name}, to confirm.")
        cluster.delete()


def cluster_brokers_seen(*, cluster: Cluster, brokers: Iterable[BrokerNode | EngineBroker]) -> None:
    """Remember these brokers (live in Metadata, or listed by the engine). At most three
    queries, and writes only for new brokers or changed addresses, since every page calls it."""
    seen = {b.node_id: b for b in brokers}
    if not seen:
        return
    now = timezone.now()
    known = {kb.broker_id: kb for kb in KnownBroker.objects.filter(cluster=cluster)}
    new = [KnownBroker(cluster=cluster, broker_id=i, host=b.host, port=b.port, rack=getattr(b, "rack", None) or "",
                       last_seen=now)
           for i, b in seen.items() if i not in known]
    if new:
        KnownBroker.objects.bulk_create(new, ignore_conflicts=True)
    for i, b in seen.items():
        kb = known.get(i)
        rack = getattr(b, "rack", None) or ""
        if kb is not None and (kb.host, kb.port, kb.rack) != (b.host, b.port, rack):
            kb.host, kb.port, kb.rack, kb.last_seen = b.host, b.port, rack, now
            kb.save(update_fields=["host", "port", "rack", "last_seen"])
    live = [i for i, b in seen.items() if isinstance(b, BrokerNode)]
    if live:   # a minute's precision is plenty, and spares most page views a write
        KnownBroker.objects.filter(cluster=cluster, broker_id__in=live,
                                   last_seen__lt=now - LAST_SEEN_PRECISION).update(last_seen=now)
