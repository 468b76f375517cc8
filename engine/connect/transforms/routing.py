"""The transforms of where a record goes: RegexRouter and TimestampRouter rename its topic,
Filter drops it (with a predicate, the records it matches, or with `negate` those it does not).

RegexRouter renames a topic the `regex` matches whole to `replacement`, Java's `$1` group
references read as Python's; a topic it does not match stays. TimestampRouter's `topic.format`
(`${topic}-${timestamp}`) takes the record's timestamp in `timestamp.format` (`yyyyMMdd`), a
SimpleDateFormat pattern in UTC with the letters engine/connect/date_format.py reads; a record
without a timestamp fails.
"""
from __future__ import annotations

import dataclasses
import re

from engine.connect.api import DataError
from engine.connect.config_def import STRING
from engine.connect.date_format import DateFormat, moment
from engine.connect.transforms.base import Transform, props_date_format, props_pattern


def _java_replacement(replacement: str) -> str:
    """Java's `$1` group references as Python's `\\g<1>`."""
    return re.sub(r"\$(\d+)", r"\\g<\1>", replacement.replace("\\", "\\\\"))


class RegexRouter(Transform):
    keys = (("regex", "Regular expression to use for matching.", STRING, True),
            ("replacement", "Replacement string.", STRING, True))

    def configure(self, props):
        super().configure(props)
        self.regex = props_pattern(props, "regex")
        self.replacement = _java_replacement(props["replacement"])

    def apply(self, record):
        if self.regex.fullmatch(record.topic):
            return dataclasses.replace(record, topic=self.regex.sub(self.replacement, record.topic, count=1))
        return record


class TimestampRouter(Transform):
    keys = (("topic.format", "Format string which can contain ${topic} and ${timestamp} as placeholders for the "
             "topic and timestamp, respectively."),
            ("timestamp.format", "Format string for the timestamp that is compatible with java.text.SimpleDateFormat."))

    def configure(self, props):
        super().configure(props)
        self.topic_format = props.get("topic.format") or "${topic}-${timestamp}"
        self.format = props_date_format(props, "timestamp.format") or DateFormat("yyyyMMdd")

    def apply(self, record):
        if record.timestamp is None:
            raise DataError(f"Timestamp missing on record: {record!r}"[:300])
        topic = self.topic_format.replace("${topic}", record.topic).replace(
            "${timestamp}", self.format.format(moment(record.timestamp)))
        return dataclasses.replace(record, topic=topic)


class Filter(Transform):
    def apply(self, record):
        return None
