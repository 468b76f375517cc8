"""Writes to a cluster's schema registry, each audited however it ends (the schema text itself
is not copied into the audit log: the registry keeps it under the version it got)."""
from __future__ import annotations

from urllib.parse import urlsplit

from console.accounts.services import audited
from console.clusters.models import Cluster
from console.errors import InvalidInput
from console.schema_registry.models import RegistrySettings, SubjectUsage
from console.schema_registry.selectors import LEVELS, MODES, require_client


def registry_settings_update(*, cluster: Cluster, actor, url: str, auth: str, username: str,
                             secret_env: str) -> RegistrySettings:
    """Point the cluster at a registry. An address holding a user or password is refused before
    anything is written or audited, since the address is shown to every viewer of the Schemas
    page: the user has its own field and the password a CONSOLE_SECRET_ variable."""
    parts = urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise InvalidInput("Put the user in its own field and the password in a CONSOLE_SECRET_ variable, not in "
                           "the address.")
    details = {"url": url, "auth": auth, "username": username, "secret_env": secret_env}
    with audited(actor=actor, cluster=cluster, action="schema_registry.configure", target=cluster.name,
                 details=details):
        row, _ = RegistrySettings.objects.update_or_create(
            cluster=cluster, defaults={"url": url, "auth": auth, "username": username, "secret_env": secret_env})
        row.full_clean()
        return row


def schema_register(*, cluster: Cluster, actor, subject: str, schema_type: str, schema: str,
                    references: list[dict]) -> dict:
    body = {"schema": schema, "schemaType": schema_type, "references": references}
    details = {"schema_type": schema_type, "references": references}
    with audited(actor=actor, cluster=cluster, action="schema.register", target=subject, details=details):
        answer = require_client(cluster).register(subject, body)
        details["schema_id"] = answer.get("id")
        return answer


def compatibility_set(*, cluster: Cluster, actor, subject: str | None, level: str) -> None:
    if level not in LEVELS:
        raise InvalidInput(f"Choose one of {', '.join(LEVELS)}.")
    with audited(actor=actor, cluster=cluster, action="schema.compatibility", target=subject or "(global)",
                 details={"level": level}):
        require_client(cluster).set_config(subject, level)


def mode_set(*, cluster: Cluster, actor, subject: str | None, mode: str) -> None:
    if mode not in MODES:
        raise InvalidInput(f"Choose one of {', '.join(MODES)}.")
    with audited(actor=actor, cluster=cluster, action="schema.mode", target=subject or "(global)",
                 details={"mode": mode}):
        require_client(cluster).set_mode(subject, mode)


def subject_delete(*, cluster: Cluster, actor, subject: str, permanent: bool) -> list[int]:
    details: dict = {"permanent": permanent}
    with audited(actor=actor, cluster=cluster, action="schema.delete_subject", target=subject, details=details):
        versions = require_client(cluster).delete_subject(subject, permanent)
        details["versions"] = versions
        return versions


def version_delete(*, cluster: Cluster, actor, subject: str, version: int, permanent: bool) -> int:
    with audited(actor=actor, cluster=cluster, action="schema.delete_version", target=f"{subject} v{version}",
                 details={"permanent": permanent}):
        return require_client(cluster).delete_version(subject, version, permanent)


def subject_usage_record(*, cluster: Cluster, topic: str, subjects: set[str]) -> None:
    """Remember that `topic` carries records of these subjects (for RecordNameStrategy subjects)."""
    for subject in subjects:
        SubjectUsage.objects.update_or_create(cluster=cluster, topic=topic, subject=subject)
