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


_SCALAR, _STRUCT, _STRUCT_ARRAY, _ARRAY = range(4)
_PLANS: dict[tuple[int, int], tuple] = {}


def _plan(fields: dict, version: int) -> tuple:
    """The checks for one schema at one version, worked out once: the schema's methods are
    too slow to call on every request (this runs on every request, Produce included)."""
    key = (id(fields), version)
    plan = _PLANS.get(key)
    if plan is None:
        steps = []
        for name, field in fields.items():
            if not field.for_version_q(version):
                continue
            type_name = field._json["type"]
            # kafka.protocol decodes the all-zero UUID (Kafka's Uuid.ZERO_UUID) as None.
            may_be_null = (type_name == "uuid" or field.nullable_for_version_q(version)
                           or field.tagged_field_q(version))
            if field.is_struct_array():
                steps.append((name, may_be_null, _STRUCT_ARRAY, _plan(field.fields, version)))
            elif field.is_struct():
                steps.append((name, may_be_null, _STRUCT, _plan(field.fields, version)))
            elif type_name.startswith("[]") and type_name != "[]uuid":
                steps.append((name, may_be_null, _ARRAY, None))
            else:
                steps.append((name, may_be_null, _SCALAR, None))
        plan = _PLANS[key] = tuple(steps)
    return plan


def null_violation(message, fields: dict, version: int) -> str | None:
    return _check(message, _plan(fields, version), version, "")


def _check(message, plan: tuple, version: int, path: str) -> str | None:
    for name, may_be_null, kind, subplan in plan:
        value = getattr(message, name, None)
        if value is None:
            if not may_be_null:
                return f"{path}{name} is null, which version {version} does not allow"
            continue
        if kind == _SCALAR:
            continue
        if kind == _STRUCT_ARRAY:
            for index, item in enumerate(value):
                problem = (f"{path}{name}[{index}] is null" if item is None
                           else _check(item, subplan, version, f"{path}{name}[{index}]."))
                if problem:
                    return problem
        elif kind == _STRUCT:
            problem = _check(value, subplan, version, f"{path}{name}.")
            if problem:
                return problem
        elif None in value:
            return f"{path}{name} holds a null"
    return None


def require(condition: bool, message: str) -> None:
    """A handler's value rule: `require(request.max_bytes >= 0, "max_bytes is negative")`."""
    if not condition:
        raise InvalidRequest(message)
