"""The registry's state, built by applying `_schemas` records in offset order.

One owner: the reader task applies records (`apply`); everything else only reads. All of it
lives on the registry's event loop, so there is no lock: an apply never interleaves with a
request handler's read.

Semantics, as in Confluent's registry:
- a subject exists while it has a version, live or soft deleted; `GET /subjects` lists the
  subjects with a live version (`deleted=true`: soft-deleted ones too);
- a schema id names one schema; the same schema registered under several subjects keeps
  its id (`ids_by_identity`), even after hard deletes, so an id is never given to another
  schema while this process knows it; `max_id` is the highest id ever seen;
- `/schemas/ids/{id}` answers while some version, live or soft deleted, uses the id.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field

from engine.schema_registry import records
from engine.schema_registry.schemas import InvalidSchema, ParsedSchema, Reference, SchemaType, parse

log = logging.getLogger(__name__)


@dataclass
class SubjectVersion:
    subject: str
    version: int
    schema_id: int
    deleted: bool


@dataclass
class StoredSchema:
    schema_id: int
    schema_type: SchemaType
    text: str
    references: tuple[Reference, ...]
    parsed: ParsedSchema | None = None
    error: str | None = None          # why a schema read from the topic does not parse here
    users: set[tuple[str, int]] = field(default_factory=set)   # (subject, version) using this id


class Store:
    def __init__(self) -> None:
        self.subjects: dict[str, dict[int, SubjectVersion]] = {}
        self.schemas: dict[int, StoredSchema] = {}
        self.ids_by_identity: dict[tuple, int] = {}
        self.max_id = 0
        self.global_level: str | None = None
        self.subject_levels: dict[str, str] = {}
        self.global_mode: str | None = None
        self.subject_modes: dict[str, str] = {}
        self.offset = -1                  # the last offset applied
        self.skipped = 0                  # records that could not be applied (logged)

    # -- applying records -------------------------------------------------------------------

    def apply(self, record: records.Record) -> None:
        self.offset = record.offset
        handler = {records.SCHEMA: self._schema, records.CONFIG: self._config, records.MODE: self._mode,
                   records.DELETE_SUBJECT: self._delete_subject, records.CLEAR_SUBJECT: self._clear_subject}.get(
            record.keytype)
        if handler is None:
            return   # NOOP and keytypes of newer registries (contexts, KEKs ...) carry no state we serve
        try:
            handler(record)
        except (KeyError, TypeError, ValueError) as exc:
            self.skipped += 1
            log.warning("Skipped _schemas record at offset %d (%s): %s", record.offset, record.keytype, exc)

    def _schema(self, record: records.Record) -> None:
        subject, version = record.key["subject"], int(record.key["version"])
        if record.value is None:
            self._hard_delete(subject, version)
            return
        value = record.value
        schema_id = int(value["id"])
        versions = self.subjects.setdefault(value["subject"], {})
        previous = versions.get(int(value["version"]))
        if previous is not None and previous.schema_id != schema_id:
            self._unuse(previous.schema_id, subject, previous.version)
        versions[int(value["version"])] = SubjectVersion(value["subject"], int(value["version"]), schema_id,
                                                         bool(value.get("deleted", False)))
        stored = self.schemas.get(schema_id)
        if stored is None:
            stored = self._load_schema(schema_id, value)
            self.schemas[schema_id] = stored
        stored.users.add((value["subject"], int(value["version"])))
        self.max_id = max(self.max_id, schema_id)

    def _load_schema(self, schema_id: int, value: dict) -> StoredSchema:
        schema_type = SchemaType.parse(value.get("schemaType"))
        references = tuple(Reference.from_json(r) for r in value.get("references") or [])
        stored = StoredSchema(schema_id, schema_type, value["schema"], references)
        try:
            stored.parsed = parse(schema_type, value["schema"], references,
                                  self.dependencies(references, include_deleted=True))
            self.ids_by_identity.setdefault(stored.parsed.identity, schema_id)
        except InvalidSchema as exc:
            stored.error = str(exc)
            log.warning("Schema id %d in _schemas does not parse here: %s", schema_id, exc)
        return stored

    def _hard_delete(self, subject: str, version: int) -> None:
        versions = self.subjects.get(subject)
        if not versions or version not in versions:
            return
        removed = versions.pop(version)
        self._unuse(removed.schema_id, subject, version)
        if not versions:
            del self.subjects[subject]

    def _unuse(self, schema_id: int, subject: str, version: int) -> None:
        stored = self.schemas.get(schema_id)
        if stored is not None:
            stored.users.discard((subject, version))

    def _delete_subject(self, record: records.Record) -> None:
        if record.value is None:
            return
        subject, up_to = record.value["subject"], int(record.value["version"])
        for version in self.subjects.get(subject, {}).values():
            if version.version <= up_to:
                version.deleted = True

    def _clear_subject(self, record: records.Record) -> None:
        subject = (record.value or record.key).get("subject")
        for version in [v for v in self.subjects.get(subject, {}).values() if v.deleted]:
            self._hard_delete(subject, version.version)

    def _config(self, record: records.Record) -> None:
        subject = record.key.get("subject")
        level = (record.value or {}).get("compatibilityLevel")
        if subject is None:
            self.global_level = level
        elif level is None:
            self.subject_levels.pop(subject, None)
        else:
            self.subject_levels[subject] = level

    def _mode(self, record: records.Record) -> None:
        subject = record.key.get("subject")
        mode = (record.value or {}).get("mode")
        if subject is None:
            self.global_mode = mode
        elif mode is None:
            self.subject_modes.pop(subject, None)
        else:
            self.subject_modes[subject] = mode

    # -- reading ----------------------------------------------------------------------------

    def pinned(self, references: tuple[Reference, ...]) -> tuple[Reference, ...]:
        """The references with version -1 ("latest") replaced by the subject's latest live
        version, so a registered schema names fixed versions: its id means the same schema
        forever, and `referenced_by` finds it, which keeps the versions it uses from being
        deleted. A subject with no live version is left as it is (`dependencies` refuses it)."""
        pinned = []
        for reference in references:
            live = self.versions(reference.subject) if reference.version == -1 else []
            pinned.append(Reference(reference.name, reference.subject, live[-1].version) if live else reference)
        return tuple(pinned)

    def dependencies(self, references: tuple[Reference, ...], include_deleted: bool = False) -> dict[str, ParsedSchema]:
        """Reference name -> parsed schema of the subject version it names; InvalidSchema if
        one is missing, soft deleted (unless `include_deleted`), or does not parse."""
        found: dict[str, ParsedSchema] = {}
        for reference in references:
            versions = {v: sv for v, sv in self.subjects.get(reference.subject, {}).items()
                        if include_deleted or not sv.deleted}
            version = max(versions) if reference.version == -1 and versions else reference.version
            entry = versions.get(version)
            if entry is None:
                raise InvalidSchema(f"Invalid schema: reference {reference.name!r} names subject "
                                    f"'{reference.subject}' version {reference.version}, which does not exist")
            stored = self.schemas[entry.schema_id]
            if stored.parsed is None:
                raise InvalidSchema(f"Invalid schema: referenced schema id {entry.schema_id} does not parse: "
                                    f"{stored.error}")
            found[reference.name] = stored.parsed
        return found

    def versions(self, subject: str, include_deleted: bool = False) -> list[SubjectVersion]:
        return [v for _, v in sorted(self.subjects.get(subject, {}).items()) if include_deleted or not v.deleted]

    def subject_names(self, include_deleted: bool = False) -> list[str]:
        return sorted(s for s in self.subjects if self.versions(s, include_deleted))

    def referenced_by(self, subject: str, version: int) -> list[int]:
        """Ids of schemas (with a version, live or soft deleted) that reference this subject version."""
        found = []
        for schema_id, stored in self.schemas.items():
            if stored.users and any(r.subject == subject and r.version == version for r in stored.references):
                found.append(schema_id)
        return sorted(found)

    def level(self, subject: str | None) -> str | None:
        return self.subject_levels.get(subject) if subject is not None else self.global_level

    def mode(self, subject: str | None) -> str | None:
        return self.subject_modes.get(subject) if subject is not None else self.global_mode
