"""Data masking for the viewer role: per-topic rules applied to values and header values.

A `json_field` rule replaces the value at a dotted path (`card.number`) of a decoded document
(JSON, or Avro, Protobuf and MessagePack as the console reads them: JSON text); a `regex` rule
replaces every match in the text. Operators and admins see values unmasked.

Masks apply to the decoded value, before anything renders it (`mask_decoded`): the browse
page, the record view, its download, search results, tail frames and exports all start from
the masked text, and a viewer's search compares the masked text too, so a search cannot reveal
what the page hides. A value that cannot be decoded far enough for the rules (binary bytes,
a decoder's error, or plain text while a rule names a field) is withheld, with the reason.
"""
from __future__ import annotations

from dataclasses import dataclass

import orjson

from console.accounts.roles import OPERATOR, has_role
from console.errors import InvalidInput
from console.messages.deserializers import Decoded
from console.user_regex import compile_user_regex


@dataclass(frozen=True)
class Rule:
    kind: str                        # json_field | regex
    pattern: str
    replacement: str = "***"


def check_rule(*, kind: str, pattern: str) -> None:
    if kind == "regex":
        compile_user_regex(pattern)
    elif kind == "json_field":
        if not pattern or not all(part for part in pattern.split(".")):
            raise InvalidInput(f"{pattern!r} is not a dotted JSON field path (like card.number).")
    else:
        raise InvalidInput(f"Unknown masking rule kind {kind!r}.")


class Masker:
    """The rules of one topic; `mask_text(None)` is None. With no rules, text passes through."""

    def __init__(self, rules: list[Rule]) -> None:
        self._fields = [(r.pattern.split("."), r.replacement) for r in rules if r.kind == "json_field"]
        self._regexes = [(compile_user_regex(r.pattern), r.replacement) for r in rules if r.kind == "regex"]

    def __bool__(self) -> bool:
        return bool(self._fields or self._regexes)

    def mask_text(self, text: str | None) -> str | None:
        """The text with every rule applied; None when a field rule cannot parse it as JSON."""
        if text is None or not self:
            return text
        if self._fields:
            text = self._mask_fields(text)
            if text is None:
                return None
        for pattern, replacement in self._regexes:
            text = pattern.sub(replacement, text)
        return text

    @property
    def names_fields(self) -> bool:
        return bool(self._fields)

    def _mask_fields(self, text: str) -> str | None:
        try:
            document = orjson.loads(text)
        except orjson.JSONDecodeError:
            return None
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


# Formats whose decoded text is a document with field paths (Avro, Protobuf and MessagePack
# values are shown as JSON text).
FIELD_FORMATS = ("json", "avro", "protobuf", "msgpack")
WITHHELD = "withheld"


def mask_decoded(decoded: Decoded, masker: Masker) -> Decoded:
    """The decoded value with the rules applied, or withheld (text "", format "withheld", the
    reason as its error) when the rules cannot be applied to it."""
    if decoded.text is None:
        return decoded
    if decoded.error or decoded.format == "hex":
        reason = f"it could not be decoded ({decoded.error})" if decoded.error else "it is binary"
        return _withheld(f"This value is withheld from the viewer role: {reason}, so the topic's masking rules "
                         "cannot be applied to it.")
    if masker.names_fields and decoded.format not in FIELD_FORMATS:
        return _withheld(f"This value is withheld from the viewer role: read as {decoded.format}, it has no fields "
                         "for the topic's masking rules to find (choose a JSON, Avro, Protobuf or MessagePack "
                         "decoder).")
    masked = masker.mask_text(decoded.text)
    if masked is None:
        return _withheld("This value is withheld from the viewer role: it is not a JSON document, so the topic's "
                         "field masking rules cannot be applied to it.")
    return Decoded(masked, decoded.format, note=decoded.note, schema_id=decoded.schema_id, subject=decoded.subject)


def _withheld(reason: str) -> Decoded:
    return Decoded("", WITHHELD, reason)
