"""The writes, run on the primary only: register, delete, compatibility level, mode.

Writes run one at a time (`_writing`), each after the reader caught up with everything in
`_schemas` (kafka_store.catch_up), so ids and versions are chosen on the topic's latest
state: a new primary never gives out an id its predecessor wrote, and no schema gets two
ids. Every check runs before the record is produced; a refused request writes nothing.
"""
from __future__ import annotations

import asyncio

from engine.schema_registry import compatibility, errors, queries, records, requests
from engine.schema_registry.kafka_store import KafkaStore
from engine.schema_registry.store import Store


class Registry:
    def __init__(self, store: Store, kafka: KafkaStore, timeout: float = 30.0) -> None:
        self.store = store
        self.kafka = kafka
        self.timeout = timeout
        self._writing = asyncio.Lock()

    async def _prepare(self) -> None:
        try:
            await self.kafka.catch_up(self.timeout)
        except asyncio.TimeoutError:
            raise errors.timeout("Timed out reading _schemas to its end before writing") from None

    async def _write(self, key: bytes, value: bytes | None) -> int:
        try:
            return await self.kafka.write(key, value, self.timeout)
        except asyncio.TimeoutError:
            raise errors.timeout("Write to the Kafka store timed out") from None
        except Exception as exc:   # aiokafka's KafkaError and connection errors alike
            raise errors.store_error(f"Error while writing to the Kafka store: {exc}") from None

    def _writable(self, subject: str | None) -> None:
        mode = queries.effective_mode(self.store, subject)
        if mode in ("READONLY", "READONLY_OVERRIDE"):
            raise errors.not_permitted(f"Subject {subject} is in read-only mode" if subject
                                       else "The registry is in read-only mode")

    # -- schemas -----------------------------------------------------------------------------

    async def register(self, subject: str, request: requests.SchemaRequest, *, normalize: bool) -> dict:
        async with self._writing:
            await self._prepare()
            store = self.store
            self._writable(subject)
            mode = queries.effective_mode(store, subject)
            parsed = queries.parse_request(store, request, normalize=normalize)
            every = store.versions(subject, include_deleted=True)
            live = [v for v in every if not v.deleted]
            if request.schema_id is None:
                for entry in reversed(live):
                    stored = store.schemas[entry.schema_id]
                    if stored.parsed is not None and stored.parsed.identity == parsed.identity:
                        return {"id": entry.schema_id}
            elif mode != "IMPORT":
                raise errors.not_permitted("Schema id can only be given in IMPORT mode")
            if mode != "IMPORT":
                level = queries.effective_level(store, subject)
                messages = compatibility.check(level, parsed, queries.previous_versions(store, live))
                if messages:
                    raise errors.incompatible(subject, messages)
            schema_id = self._choose_id(parsed.identity, request.schema_id)
            version = request.version if mode == "IMPORT" and request.version else \
                (every[-1].version + 1 if every else 1)
            if any(v.version == version for v in every):
                raise errors.invalid_schema(f"Version {version} of subject {subject} already exists")
            await self._write(records.schema_key(subject, version), records.schema_value(
                subject=subject, version=version, schema_id=schema_id, schema_type=parsed.schema_type.value,
                references=[r.to_json() for r in parsed.references], schema=parsed.text, deleted=False))
            return {"id": schema_id}

    def _choose_id(self, identity: tuple, wanted: int | None) -> int:
        existing = self.store.ids_by_identity.get(identity)
        if wanted is None:
            return existing if existing is not None else self.store.max_id + 1
        holder = self.store.schemas.get(wanted)
        if holder is not None and (holder.parsed is None or holder.parsed.identity != identity):
            raise errors.RegistryError(422, errors.ID_DOES_NOT_MATCH,
                                       f"Schema id {wanted} is already used by a different schema")
        return wanted

    async def delete_subject(self, subject: str, *, permanent: bool) -> list[int]:
        async with self._writing:
            await self._prepare()
            store = self.store
            every = store.versions(subject, include_deleted=True)
            if not every:
                raise errors.subject_not_found(subject)
            self._writable(subject)
            live = [v for v in every if not v.deleted]
            for entry in (live if not permanent else every):
                if store.referenced_by(subject, entry.version):
                    raise errors.reference_exists(f"Subject({subject}) Version({entry.version})")
            if not permanent:
                if not live:
                    raise errors.subject_soft_deleted(subject)
                await self._write(records.delete_subject_key(subject),
                                  records.delete_subject_value(subject, live[-1].version))
                return [v.version for v in live]
            if live:
                raise errors.subject_not_soft_deleted(subject)
            for entry in every:
                await self._write(records.schema_key(subject, entry.version), None)
            if store.level(subject) is not None:
                await self._write(records.config_key(subject), None)
            if store.mode(subject) is not None:
                await self._write(records.mode_key(subject), None)
            return [v.version for v in every]

    async def delete_version(self, subject: str, version: int, *, permanent: bool) -> int:
        async with self._writing:
            await self._prepare()
            store = self.store
            entry = queries.resolve(store, subject, version, deleted=permanent)
            self._writable(subject)
            if entry.deleted and not permanent:
                raise errors.version_soft_deleted(subject, entry.version)
            if permanent and not entry.deleted:
                raise errors.version_not_soft_deleted(subject, entry.version)
            if store.referenced_by(subject, entry.version):
                raise errors.reference_exists(f"Subject({subject}) Version({entry.version})")
            key = records.schema_key(subject, entry.version)
            if permanent:
                await self._write(key, None)
            else:
                stored = store.schemas[entry.schema_id]
                await self._write(key, records.schema_value(
                    subject=subject, version=entry.version, schema_id=entry.schema_id,
                    schema_type=stored.schema_type.value, references=[r.to_json() for r in stored.references],
                    schema=stored.text, deleted=True))
            return entry.version

    # -- configuration ----------------------------------------------------------------------

    async def set_config(self, subject: str | None, level: str) -> dict:
        async with self._writing:
            await self._prepare()
            self._writable(subject)
            await self._write(records.config_key(subject), records.config_value(level))
            return {"compatibility": level}

    async def delete_config(self, subject: str | None) -> dict:
        async with self._writing:
            await self._prepare()
            previous = queries.effective_level(self.store, subject)
            if subject is not None and self.store.level(subject) is None and not self.store.versions(
                    subject, include_deleted=True):
                raise errors.subject_not_found(subject)
            self._writable(subject)
            await self._write(records.config_key(subject), None)
            return {"compatibilityLevel": previous}

    async def set_mode(self, subject: str | None, mode: str, *, force: bool) -> dict:
        async with self._writing:
            await self._prepare()
            if mode == "IMPORT" and not force:
                has_schemas = self.store.versions(subject, include_deleted=True) if subject is not None \
                    else self.store.subject_names(include_deleted=True)
                if has_schemas:
                    raise errors.not_permitted("Cannot import since found existing subjects")
            await self._write(records.mode_key(subject), records.mode_value(mode))
            return {"mode": mode}

    async def delete_mode(self, subject: str) -> dict:
        async with self._writing:
            await self._prepare()
            previous = queries.effective_mode(self.store, subject)
            await self._write(records.mode_key(subject), None)
            return {"mode": previous}
