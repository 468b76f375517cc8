"""Predicates (KIP-585): a transform with `predicate` runs only on the records its predicate
matches, or with `negate=true` only on those it does not.

Built in: TopicNameMatches (`pattern`, a regex matching the topic whole), HasHeaderKey (`name`:
a header of that name, whatever its value) and RecordIsTombstone (a null value). Not built in:
custom predicate classes.
"""
from __future__ import annotations

from engine.connect.config_def import STRING
from engine.connect.transforms.base import Configured, props_pattern


class Predicate(Configured):
    def test(self, record) -> bool:
        raise NotImplementedError


class TopicNameMatches(Predicate):
    keys = (("pattern", "A Java regular expression for matching against the name of a record's topic.", STRING,
             True),)

    def configure(self, props):
        super().configure(props)
        self.pattern = props_pattern(props, "pattern")

    def test(self, record) -> bool:
        return self.pattern.fullmatch(record.topic) is not None


class HasHeaderKey(Predicate):
    keys = (("name", "The header name.", STRING, True),)

    def configure(self, props):
        super().configure(props)
        self.name = str(props["name"])

    def test(self, record) -> bool:
        return any(k == self.name for k, _ in record.headers)


class RecordIsTombstone(Predicate):
    def test(self, record) -> bool:
        return record.value is None
