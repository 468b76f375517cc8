"""The cluster's ACLs by id, indexed by resource for the authorizer (Kafka's AclCache).

Every binding has an id (a UUID string, as Kafka's AccessControlEntryRecord). Beside the
id map, the index keeps per resource type:
- the LITERAL bindings by name (the `*` wildcard is one of these names), and
- the PREFIXED bindings by prefix, with the prefixes in a sorted list, so that the prefixes
  of a resource name are found by a range scan from the name downwards (`prefixes_of`), as
  Kafka's StandardAuthorizerData walks its sorted set, instead of a walk over every ACL.
`version` moves on every change: caches of decisions compare it.

In the engine the metadata image owns one, changed only by applying ACL records on the event
loop; the console builds one for a principal's permissions. Not thread-safe.
"""
from __future__ import annotations

import bisect
from typing import Iterator

from kafka_rules.acls import LITERAL, WILDCARD, AclBinding, AclFilter


class AclIndex:
    def __init__(self) -> None:
        self.by_id: dict[str, AclBinding] = {}
        self._ids: dict[AclBinding, str] = {}
        self._literal: dict[tuple[int, str], list[AclBinding]] = {}
        self._prefixed: dict[tuple[int, str], list[AclBinding]] = {}
        self._prefixes: dict[int, list[str]] = {}       # resource type -> sorted distinct prefixes
        self.version = 0

    def __len__(self) -> int:
        return len(self.by_id)

    def id_of(self, binding: AclBinding) -> str | None:
        return self._ids.get(binding)

    def add(self, acl_id: str, binding: AclBinding) -> None:
        if acl_id in self.by_id or binding in self._ids:
            raise ValueError(f"ACL {acl_id} or its binding is already present")
        self.by_id[acl_id] = binding
        self._ids[binding] = acl_id
        key = (binding.resource_type, binding.resource_name)
        if binding.pattern_type == LITERAL:
            self._literal.setdefault(key, []).append(binding)
        else:
            entries = self._prefixed.get(key)
            if entries is None:
                entries = self._prefixed[key] = []
                bisect.insort(self._prefixes.setdefault(binding.resource_type, []), binding.resource_name)
            entries.append(binding)
        self.version += 1

    def remove(self, acl_id: str) -> AclBinding:
        binding = self.by_id.pop(acl_id)      # KeyError: no such ACL
        del self._ids[binding]
        key = (binding.resource_type, binding.resource_name)
        table = self._literal if binding.pattern_type == LITERAL else self._prefixed
        entries = table[key]
        entries.remove(binding)
        if not entries:
            del table[key]
            if binding.pattern_type != LITERAL:
                prefixes = self._prefixes[binding.resource_type]
                del prefixes[bisect.bisect_left(prefixes, binding.resource_name)]
        self.version += 1
        return binding

    # --- lookups ----------------------------------------------------------------------------

    def literal(self, resource_type: int, name: str) -> list[AclBinding]:
        return self._literal.get((resource_type, name), _NONE)

    def prefixes_of(self, resource_type: int, name: str) -> Iterator[str]:
        """The stored prefixes that `name` starts with, longest first.

        From the largest stored prefix <= name: if it is a prefix of name, it is yielded and
        the search goes on below it; if not, any prefix of name left in the list is at most
        as long as their common start, so the search jumps to that. Each step shortens the
        candidate, so a lookup costs a few bisections, whatever the number of ACLs."""
        prefixes = self._prefixes.get(resource_type)
        if not prefixes:
            return
        candidate = name
        while candidate:
            at = bisect.bisect_right(prefixes, candidate) - 1
            if at < 0:
                return
            found = prefixes[at]
            if name.startswith(found):
                yield found
                candidate = found[:-1]
            else:
                candidate = name[:_common_length(found, name)]

    def prefixed(self, resource_type: int, prefix: str) -> list[AclBinding]:
        return self._prefixed.get((resource_type, prefix), _NONE)

    def applying_to(self, resource_type: int, name: str) -> Iterator[AclBinding]:
        """Every binding whose pattern covers the resource: its literal name, the wildcard
        and each prefix of it."""
        yield from self.literal(resource_type, name)
        if name != WILDCARD:
            yield from self.literal(resource_type, WILDCARD)
        for prefix in self.prefixes_of(resource_type, name):
            yield from self._prefixed[(resource_type, prefix)]

    def matching(self, acl_filter: AclFilter) -> list[tuple[str, AclBinding]]:
        """(id, binding) of every ACL the filter matches, in a stable order."""
        found = [(acl_id, b) for acl_id, b in self.by_id.items() if acl_filter.matches(b)]
        found.sort(key=lambda item: _sort_key(item[1]))
        return found

    def of_type(self, resource_type: int) -> Iterator[AclBinding]:
        for (kind, _), entries in self._literal.items():
            if kind == resource_type:
                yield from entries
        for (kind, _), entries in self._prefixed.items():
            if kind == resource_type:
                yield from entries


_NONE: list[AclBinding] = []


def _common_length(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _sort_key(b: AclBinding) -> tuple:
    return (b.resource_type, b.resource_name, b.pattern_type, b.principal, b.host, b.operation, b.permission_type)
