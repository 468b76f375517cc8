"""Reads of a cluster's schema registry: the subjects overview, a subject's versions and diffs,
the compatibility preview, and the decoder the message pages use.

The overview asks the registry for each subject's latest version and level on a few threads
at once (one request each), so a registry with a few hundred subjects answers in a second.
Topics that use a subject: by Confluent's TopicNameStrategy (`<topic>-key`, `<topic>-value`)
and TopicRecordNameStrategy (`<topic>-<record>`) from the cluster's topic names, and by
RecordNameStrategy (subjects named after records) from what the message pages saw
(SubjectUsage rows).
"""
from __future__ import annotations

import difflib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import ConsoleError, InvalidInput
from console.schema_registry import resolver
from console.schema_registry.client import RegistryClient, RegistryError
from console.schema_registry.compatibility import Verdict, parse_verdict
from console.schema_registry.connection import registry_client
from console.schema_registry.models import SubjectUsage

LEVELS = ("BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL", "FULL_TRANSITIVE", "NONE")
MODES = ("READWRITE", "READONLY", "IMPORT")
TYPES = ("AVRO", "PROTOBUF", "JSON")


@dataclass
class SubjectRow:
    subject: str
    schema_type: str = ""
    latest_version: int | None = None
    schema_id: int | None = None
    level: str = ""
    own_level: bool = False
    topics: list[str] = field(default_factory=list)
    error: str = ""


@dataclass
class Overview:
    configured: bool
    url: str = ""
    level: str = ""
    mode: str = ""
    rows: list[SubjectRow] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    error: str = ""
    error_code: str | None = None


def require_client(cluster: Cluster) -> RegistryClient:
    client = registry_client(cluster)
    if client is None:
        raise ConsoleError(f"Cluster {cluster.name} has no schema registry configured.")
    return client


def subjects_overview(*, cluster: Cluster) -> Overview:
    client = registry_client(cluster)
    if client is None:
        return Overview(configured=False)
    overview = Overview(configured=True, url=client.url)
    try:
        overview.level, overview.mode = client.config(), client.mode()
        live = client.subjects()
        overview.deleted = sorted(set(client.subjects(deleted=True)) - set(live))
    except ConsoleError as exc:
        overview.error, overview.error_code = str(exc), exc.kafka_code
        return overview
    with ThreadPoolExecutor(max_workers=8) as pool:
        overview.rows = list(pool.map(lambda s: _subject_row(client, s, overview.level), live))
    _attach_topics(cluster, overview.rows)
    return overview


def _subject_row(client: RegistryClient, subject: str, global_level: str) -> SubjectRow:
    row = SubjectRow(subject)
    try:
        latest = client.version(subject)
        row.schema_type, row.latest_version = latest.get("schemaType", "AVRO"), latest["version"]
        row.schema_id = latest["id"]
        own = client.subject_config(subject)
        row.level, row.own_level = own or global_level, own is not None
    except RegistryError as exc:
        row.error = str(exc)
    return row


def _attach_topics(cluster: Cluster, rows: list[SubjectRow]) -> None:
    try:
        with cluster_gateway(cluster) as gw:
            topics = sorted((t.name for t in gw.metadata(cached=True).topics), key=len, reverse=True)
    except ConsoleError:
        topics = []
    seen: dict[str, set[str]] = {}
    for usage in SubjectUsage.objects.filter(cluster=cluster):
        seen.setdefault(usage.subject, set()).add(usage.topic)
    for row in rows:
        found = set(seen.get(row.subject, ()))
        for topic in topics:
            if row.subject in (f"{topic}-key", f"{topic}-value") or row.subject.startswith(f"{topic}-"):
                found.add(topic)
                break
        row.topics = sorted(found)


@dataclass
class VersionView:
    version: int
    schema_id: int
    schema_type: str
    text: str                   # pretty-printed
    references: list[dict]
    deleted: bool


@dataclass
class SubjectPage:
    subject: str
    versions: list[VersionView]
    shown: VersionView | None
    level: str
    own_level: bool
    mode: str
    diff: list[tuple[str, str]] | None = None       # (kind: add|del|same|hunk, line)
    diff_pair: tuple[int, int] | None = None


def subject_detail(*, cluster: Cluster, subject: str, version: int | None = None,
                   diff: tuple[int, int] | None = None) -> SubjectPage:
    client = require_client(cluster)
    numbers = client.versions(subject, deleted=True)
    live = _live_versions(client, subject)
    # One GET per version (the registry's API has no call for them all): 8 at a time, as the
    # overview asks for its subjects.
    with ThreadPoolExecutor(max_workers=8) as pool:
        answers = list(pool.map(lambda number: client.version(subject, number, deleted=True), numbers))
    versions = [_version_view(number, answer, deleted=number not in live) for number, answer in zip(numbers, answers)]
    shown = next((v for v in versions if v.version == version), versions[-1] if versions else None)
    own = client.subject_config(subject)
    page = SubjectPage(subject, versions, shown, own or client.config(), own is not None, client.mode(subject))
    if diff is not None:
        by_number = {v.version: v for v in versions}
        if diff[0] in by_number and diff[1] in by_number:
            page.diff, page.diff_pair = schema_diff(by_number[diff[0]].text, by_number[diff[1]].text), diff
    return page


def _version_view(number: int, answer: dict, *, deleted: bool) -> VersionView:
    schema_type = answer.get("schemaType", "AVRO")
    return VersionView(number, answer["id"], schema_type, pretty(schema_type, answer["schema"]),
                       answer.get("references") or [], deleted)


def _live_versions(client: RegistryClient, subject: str) -> set[int]:
    """The subject's versions not soft-deleted; none when every one is (the registry says 40401)."""
    try:
        return set(client.versions(subject))
    except RegistryError as exc:
        if exc.error_code == 40401:
            return set()
        raise


def pretty(schema_type: str, text: str) -> str:
    """Avro and JSON schemas indented; .proto text as it is."""
    if schema_type in ("AVRO", "JSON"):
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text
    return text


# difflib's matching is quadratic in the lines: two 12,000-line versions (3,000 fields) take
# half a minute of a console worker, holding the GIL. Longer versions are not compared here.
MAX_DIFF_LINES = 2000


def schema_diff(old: str, new: str) -> list[tuple[str, str]]:
    """The unified diff of two pretty-printed versions as (kind, line) pairs; one `hunk` line
    saying so when either version is longer than MAX_DIFF_LINES."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    if max(len(old_lines), len(new_lines)) > MAX_DIFF_LINES:
        return [("hunk", f"These versions ({len(old_lines):,} and {len(new_lines):,} lines) are too long to "
                         f"compare here (at most {MAX_DIFF_LINES:,} lines each): open each version to read it.")]
    lines = []
    for line in difflib.unified_diff(old_lines, new_lines, lineterm="", n=3):
        if line.startswith(("---", "+++")):
            continue
        kind = "hunk" if line.startswith("@@") else "add" if line.startswith("+") else \
            "del" if line.startswith("-") else "same"
        lines.append((kind, line))
    return lines


def compatibility_preview(*, cluster: Cluster, subject: str, body: dict) -> Verdict:
    """The registry's verdict (verbose) on registering `body` under `subject`, read out as
    problems in words, the version checked against and the level (compatibility.py); a new
    subject is compatible by definition."""
    client = require_client(cluster)
    try:
        return parse_verdict(client.test_compatibility(subject, body))
    except RegistryError as exc:
        if exc.error_code in (40401, 40402):
            return Verdict(is_compatible=True, notes=["The subject has no live version yet: nothing to check against."])
        raise


def registry_decoder(*, cluster: Cluster, topic: str):
    """For the message pages: schema id -> (resolved schema, the subject to show for this topic),
    or None when the cluster has no registry. Failing to reach the registry fails one record's
    decoding (shown as hex with the reason), never the page; a registry that does not answer is
    asked again only after resolver.UNREACHABLE_SECONDS (RegistryUnreachable until then), so a
    page of records asks it once."""
    try:
        client = registry_client(cluster)
    except ConsoleError:
        return None
    if client is None:
        return None

    def lookup(schema_id: int):
        resolved = resolver.resolve_id(client, schema_id)
        return resolved, resolver.subject_for(client, resolved, topic)
    return lookup


def serialize_with_subject(*, cluster: Cluster, subject: str, version: int | None, text: str,
                           message_type: str = "") -> bytes:
    """A JSON value (text) written with a subject's latest or given version, in Confluent's framing."""
    client = require_client(cluster)
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"The value is not valid JSON: {exc}.") from None
    resolved = resolver.resolve_version(client, subject, version or "latest")
    try:
        return resolver.encode(resolved, value, message_type)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise InvalidInput(f"The value does not fit {subject} version {version or 'latest'} "
                           f"({resolved.schema_type}, schema id {resolved.schema_id}): {exc}") from None
