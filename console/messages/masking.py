"""Data masking for the viewer role: per-topic rules applied to values and header values.

A `json_field` rule replaces the value at a dotted path (`card.number`) of a JSON document; a
`regex` rule replaces every match in the text. Masks apply to the decoded text a viewer is
shown (browse, full record, search results, tail, export) and to the bytes a viewer's search
compares, so a search cannot reveal what the page hides. Operators and admins see values
unmasked.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import orjson

from console.accounts.roles import OPERATOR, has_role
from console.errors import InvalidInput


@dataclass(frozen=True)
class Rule:
    kind: str                        # json_field | regex
    pattern: str
    replacement: str = "***"


def check_rule(*, kind: str, pattern: str) -> None:
    if kind == "regex":
        try:
            re.compile(pattern)
        except re.error as exc:
            raise InvalidInput(f"Bad regular expression {pattern!r}: {exc}.") from exc
    elif kind == "json_field":
        if not pattern or not all(part for part in pattern.split(".")):
            raise InvalidInput(f"{pattern!r} is not a dotted JSON field path (like card.number).")
    else:
        raise InvalidInput(f"Unknown masking rule kind {kind!r}.")


class Masker:
    """The rules of one topic; `mask_text(None)` is None. With no rules, text passes through."""

    def __init__(self, rules: list[Rule]) -> None:
        self._fields = [(r.pattern.split("."), r.replacement) for r in rules if r.kind == "json_field"]
        self._regexes = [(re.compile(r.pattern), r.replacement) for r in rules if r.kind == "regex"]

    def __bool__(self) -> bool:
        return bool(self._fields or self._regexes)

    def mask_text(self, text: str | None) -> str | None:
        if text is None or not self:
            return text
        if self._fields:
            text = self._mask_fields(text)
        for pattern, replacement in self._regexes:
            text = pattern.sub(replacement, text)
        return text

    def mask_bytes(self, data: bytes | None) -> bytes | None:
        if data is None or not self:
            return data
        return self.mask_text(data.decode("utf-8", errors="replace")).encode("utf-8")

    def _mask_fields(self, text: str) -> str:
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError:
            return text
        changed = False
        for path, replacement in self._fields:
            changed |= _replace(document, path, replacement)
        if not changed:
            return text
        pretty = "\n" in text.strip()
        return orjson.dumps(document, option=orjson.OPT_INDENT_2 if pretty else 0).decode()


def _replace(document, path: list[str], replacement: str) -> bool:
    for name in path[:-1]:
        if not isinstance(document, dict) or name not in document:
            return False
        document = document[name]
    if isinstance(document, dict) and path[-1] in document:
        document[path[-1]] = replacement
        return True
    return False


def masked_for(user) -> bool:
    """Viewers see masked values; operators and admins see them as they are."""
    return not has_role(user, OPERATOR)
