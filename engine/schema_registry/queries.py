"""Every read of the REST API, answered from the Store of this instance (any instance reads).

Shapes and errors are Confluent's: a version is
`{"subject","version","id","schemaType" (not for AVRO),"references" (if any),"schema"}`;
`/schemas/ids/{id}` is `{"schema","schemaType","references"}`; an unknown subject is
40401, an unknown version 40402, an unknown id 40403.
"""
from __future__ import annotations

from engine.schema_registry import compatibility, errors, requests
from engine.schema_registry.compatibility import DEFAULT_LEVEL, PreviousVersion
from engine.schema_registry.schemas import InvalidSchema, ParsedSchema, SchemaType, parse
from engine.schema_registry.store import Store, StoredSchema, SubjectVersion

SCHEMA_TYPES = ["JSON", "PROTOBUF", "AVRO"]


def subjects(store: Store, *, deleted: bool, prefix: str = "") -> list[str]:
    return [s for s in store.subject_names(include_deleted=deleted) if s.startswith(prefix)]


def all_schemas(store: Store, *, prefix: str = "", deleted: bool = False, latest_only: bool = False,
                offset: int = 0, limit: int = -1) -> list[dict]:
    """`GET /schemas`: every subject version whose subject starts with `prefix`, as a version
    body, by subject then version; the latest of each subject only with `latest_only`; then
    `offset` of them skipped and at most `limit` kept (-1: all), as Confluent's SchemasResource."""
    found = []
    for subject in subjects(store, deleted=deleted, prefix=prefix):
        entries = store.versions(subject, include_deleted=deleted)
        for entry in entries[-1:] if latest_only else entries:
            found.append(version_json(store, entry))
    found = found[offset:]
    return found if limit < 0 else found[:limit]


def versions(store: Store, subject: str, *, deleted: bool) -> list[int]:
    found = store.versions(subject, include_deleted=deleted)
    if not found:
        raise errors.subject_not_found(subject)
    return [v.version for v in found]


def resolve(store: Store, subject: str, version: int, *, deleted: bool) -> SubjectVersion:
    """The subject version a path names; `latest` is the latest live version."""
    every = store.versions(subject, include_deleted=True)
    if not every:
        raise errors.subject_not_found(subject)
    if version == requests.LATEST:
        live = [v for v in every if deleted or not v.deleted]
        if not live:
            raise errors.version_not_found(version)
        return live[-1]
    found = next((v for v in every if v.version == version), None)
    if found is None or (found.deleted and not deleted):
        raise errors.version_not_found(version)
    return found


def version_json(store: Store, entry: SubjectVersion, fmt: str = "") -> dict:
    stored = store.schemas[entry.schema_id]
    body = {"subject": entry.subject, "version": entry.version, "id": entry.schema_id}
    body.update(_schema_fields(stored, fmt))
    return body


def get_version(store: Store, subject: str, version: int, *, deleted: bool, fmt: str = "") -> dict:
    return version_json(store, resolve(store, subject, version, deleted=deleted), fmt)


def schema_by_id(store: Store, schema_id: int, fmt: str = "") -> dict:
    return _schema_fields(_stored(store, schema_id), fmt)


def schema_text(store: Store, schema_id: int) -> str:
    return _stored(store, schema_id).text


def id_versions(store: Store, schema_id: int, *, deleted: bool) -> list[dict]:
    stored = _stored(store, schema_id)
    users = []
    for subject, version in sorted(stored.users):
        entry = store.subjects.get(subject, {}).get(version)
        if entry is not None and (deleted or not entry.deleted):
            users.append({"subject": subject, "version": version})
    return users


def id_subjects(store: Store, schema_id: int, *, deleted: bool) -> list[str]:
    return sorted({u["subject"] for u in id_versions(store, schema_id, deleted=deleted)})


def referenced_by(store: Store, subject: str, version: int) -> list[int]:
    entry = resolve(store, subject, version, deleted=True)
    return store.referenced_by(subject, entry.version)


def parse_request(store: Store, request: requests.SchemaRequest, *, normalize: bool) -> ParsedSchema:
    """The request's schema parsed with its references resolved; a reference to version -1
    names the subject's latest version, which the parsed schema keeps (Store.pinned)."""
    references = store.pinned(request.references)
    try:
        return parse(request.schema_type, request.schema, references, store.dependencies(references),
                     normalize=normalize)
    except InvalidSchema as exc:
        raise errors.invalid_schema(str(exc)) from None


def lookup(store: Store, subject: str, request: requests.SchemaRequest, *, normalize: bool, deleted: bool) -> dict:
    """POST /subjects/{s}: the version of this subject that holds the schema."""
    candidates = store.versions(subject, include_deleted=deleted)
    if not candidates:
        raise errors.subject_not_found(subject)
    parsed = parse_request(store, request, normalize=normalize)
    for entry in reversed(candidates):
        stored = store.schemas[entry.schema_id]
        if stored.parsed is not None and stored.parsed.identity == parsed.identity:
            return version_json(store, entry)
    raise errors.schema_not_found()


def effective_level(store: Store, subject: str | None) -> str:
    return (subject is not None and store.level(subject)) or store.level(None) or DEFAULT_LEVEL


def effective_mode(store: Store, subject: str | None) -> str:
    return (subject is not None and store.mode(subject)) or store.mode(None) or "READWRITE"


def get_config(store: Store, subject: str | None, *, default_to_global: bool) -> dict:
    if subject is None:
        return {"compatibilityLevel": effective_level(store, None)}
    level = store.level(subject)
    if level is None and not default_to_global:
        raise errors.subject_compatibility_not_configured(subject)
    return {"compatibilityLevel": level or effective_level(store, None)}


def get_mode(store: Store, subject: str | None, *, default_to_global: bool) -> dict:
    if subject is None:
        return {"mode": effective_mode(store, None)}
    mode = store.mode(subject)
    if mode is None and not default_to_global:
        raise errors.subject_mode_not_configured(subject)
    return {"mode": mode or effective_mode(store, None)}


def previous_versions(store: Store, entries: list[SubjectVersion]) -> list[PreviousVersion]:
    found = []
    for entry in entries:
        stored = store.schemas[entry.schema_id]
        if stored.parsed is not None:
            found.append(PreviousVersion(entry.version, stored.parsed))
    return found


def test_compatibility(store: Store, subject: str, version: int | None, request: requests.SchemaRequest, *,
                       normalize: bool, verbose: bool) -> dict:
    """POST /compatibility/subjects/{s}/versions[/{v}]: would this schema be accepted?"""
    parsed = parse_request(store, request, normalize=normalize)
    level = effective_level(store, subject)
    if version is None:
        against = store.versions(subject)
    else:
        against = [resolve(store, subject, version, deleted=False)]
        level = level.removesuffix("_TRANSITIVE")
    messages = compatibility.check(level, parsed, previous_versions(store, against))
    body: dict = {"is_compatible": not messages}
    if verbose:
        body["messages"] = messages
    return body


def _stored(store: Store, schema_id: int) -> StoredSchema:
    stored = store.schemas.get(schema_id)
    if stored is None or not stored.users:
        raise errors.schema_not_found(schema_id)
    return stored


def _schema_fields(stored: StoredSchema, fmt: str) -> dict:
    body: dict = {}
    if stored.schema_type is not SchemaType.AVRO:
        body["schemaType"] = stored.schema_type.value
    if stored.references:
        body["references"] = [r.to_json() for r in stored.references]
    text = stored.text
    if fmt == "serialized" and stored.schema_type is SchemaType.PROTOBUF and stored.parsed is not None:
        text = stored.parsed.model.serialized()
    body["schema"] = text
    return body
