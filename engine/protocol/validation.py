"""Rules a decoded request must keep before any handler sees it.

kafka.protocol decodes a null (length -1, or compact length 0) in any string, bytes or
array field, whether or not the schema allows null there. Kafka's generated readers refuse
such a request ("non-nullable field was serialized as null"), and so do we: `null_violation`
walks the request against its JSON schema and names the first field that is null where the
version does not allow it (a None UUID is the zero UUID, which is no null). The request is answered INVALID_REQUEST and the connection closed
(dispatch.py), as Kafka does.

Handlers add their own value rules (a negative max_bytes, say) by raising `InvalidRequest`.
"""
from __future__ import annotations


class InvalidRequest(Exception):
    """The request decodes but breaks the protocol's rules: INVALID_REQUEST, then close."""


def null_violation(message, fields: dict, version: int, path: str = "") -> str | None:
    for name, field in fields.items():
        if not field.for_version_q(version):
            continue
        value = getattr(message, name, None)
        if value is None:
            # kafka.protocol decodes the all-zero UUID (Kafka's Uuid.ZERO_UUID) as None.
            if field._json["type"] == "uuid":
                continue
            if not field.nullable_for_version_q(version) and not field.tagged_field_q(version):
                return f"{path}{name} is null, which version {version} does not allow"
            continue
        if field.is_struct_array():
            for index, item in enumerate(value):
                if item is None:
                    return f"{path}{name}[{index}] is null"
                problem = null_violation(item, field.fields, version, f"{path}{name}[{index}].")
                if problem:
                    return problem
        elif field.is_struct():
            problem = null_violation(value, field.fields, version, f"{path}{name}.")
            if problem:
                return problem
        elif field._json["type"] not in ("[]uuid", "uuid") and field._json["type"].startswith("[]") \
                and any(item is None for item in value):
            return f"{path}{name} holds a null"
    return None


def require(condition: bool, message: str) -> None:
    """A handler's value rule: `require(request.max_bytes >= 0, "max_bytes is negative")`."""
    if not condition:
        raise InvalidRequest(message)
