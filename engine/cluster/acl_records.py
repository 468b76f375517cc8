"""ACLs in the metadata journal, as KRaft keeps them, and how CreateAcls / DeleteAcls change them.

Records (Kafka's AccessControlEntryRecord and RemoveAccessControlEntryRecord, as JSON):
  {"type": "access_control_entry", "id": <uuid>, "resource_type": 2, "resource_name": "orders",
   "pattern_type": 3, "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}
  {"type": "remove_access_control_entry", "id": <uuid>}
The image's AclIndex (kafka_rules/acl_index.py) is rebuilt from them at start, so ACLs
survive kill -9 like every other metadata change, and every broker of the process reads them.

Kafka's rules (AclControlManager): each binding of a CreateAcls is validated on its own
(INVALID_REQUEST with Kafka's message); creating a binding that exists already succeeds and
writes nothing. A DeleteAcls filter with an unknown code is INVALID_REQUEST; the others
remove every ACL they match, each once even when several filters match it, in one commit.
Pure functions over the image's index; the controller (the event loop) owns it.
"""
from __future__ import annotations

import uuid

import kafka.errors as Errors

from engine.errors import ApiError
from kafka_rules.acl_index import AclIndex
from kafka_rules.acls import AclBinding, AclFilter, InvalidAcl, validate_binding, validate_filter

ENTRY, REMOVE = "access_control_entry", "remove_access_control_entry"


def entry_record(acl_id: str, binding: AclBinding) -> dict:
    return {"type": ENTRY, "id": acl_id, "resource_type": binding.resource_type,
            "resource_name": binding.resource_name, "pattern_type": binding.pattern_type,
            "principal": binding.principal, "host": binding.host, "operation": binding.operation,
            "permission_type": binding.permission_type}


def remove_record(acl_id: str) -> dict:
    return {"type": REMOVE, "id": acl_id}


def binding_of(record: dict) -> AclBinding:
    return AclBinding(record["resource_type"], record["resource_name"], record["pattern_type"], record["principal"],
                      record["host"], record["operation"], record["permission_type"])


def check_entry(acls: AclIndex, record: dict) -> None:
    """A record that would not apply cleanly raises ValueError (the journal is then refused)."""
    uuid.UUID(record["id"])
    for key in ("resource_type", "pattern_type", "operation", "permission_type"):
        if not isinstance(record[key], int) or isinstance(record[key], bool):
            raise ValueError(f"{key} must be an integer")
    for key in ("resource_name", "principal", "host"):
        if not isinstance(record[key], str):
            raise ValueError(f"{key} must be a string")
    validate_binding(binding_of(record))          # InvalidAcl is a ValueError
    if record["id"] in acls.by_id or acls.id_of(binding_of(record)) is not None:
        raise ValueError(f"ACL {record['id']} is already present")


def check_remove(acls: AclIndex, record: dict) -> None:
    if record["id"] not in acls.by_id:
        raise ValueError(f"no ACL with id {record['id']}")


def apply_entry(acls: AclIndex, record: dict) -> None:
    acls.add(record["id"], binding_of(record))


def apply_remove(acls: AclIndex, record: dict) -> None:
    acls.remove(record["id"])


def snapshot_records(acls: AclIndex) -> list[dict]:
    return [entry_record(acl_id, binding) for acl_id, binding in acls.by_id.items()]


def create(acls: AclIndex, bindings: list[AclBinding]) -> tuple[list[ApiError | None], list[dict]]:
    """(one result per binding: None or its error, the records to commit)."""
    results, records, pending = [], [], set()
    for binding in bindings:
        try:
            validate_binding(binding)
        except InvalidAcl as exc:
            results.append(ApiError(Errors.InvalidRequestError, str(exc)))
            continue
        results.append(None)
        if acls.id_of(binding) is None and binding not in pending:
            pending.add(binding)
            records.append(entry_record(_new_id(acls), binding))
    return results, records


def delete(acls: AclIndex, filters: list[AclFilter]) -> tuple[list[ApiError | list[AclBinding]], list[dict]]:
    """(per filter: its error, or the bindings it matched; the records to commit)."""
    results, records, removed = [], [], set()
    for acl_filter in filters:
        try:
            validate_filter(acl_filter)
        except InvalidAcl as exc:
            results.append(ApiError(Errors.InvalidRequestError, str(exc)))
            continue
        matched = acls.matching(acl_filter)
        results.append([binding for _, binding in matched])
        for acl_id, _ in matched:
            if acl_id not in removed:
                removed.add(acl_id)
                records.append(remove_record(acl_id))
    return results, records


def describe(acls: AclIndex, acl_filter: AclFilter) -> list[AclBinding]:
    """The bindings a DescribeAcls filter matches; an unknown code raises ApiError(INVALID_REQUEST)."""
    try:
        validate_filter(acl_filter)
    except InvalidAcl as exc:
        raise ApiError(Errors.InvalidRequestError, str(exc)) from None
    return [binding for _, binding in acls.matching(acl_filter)]


def _new_id(acls: AclIndex) -> str:
    while True:
        acl_id = str(uuid.uuid4())
        if acl_id not in acls.by_id:
            return acl_id
