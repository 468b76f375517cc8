"""Java's SimpleDateFormat patterns, and Connect's Date, Time and Timestamp logical types, for
the transforms (TimestampConverter, TimestampRouter, HeaderFrom's header text). Times are UTC,
as Connect's transforms set them.

`DateFormat("yyyy-MM-dd'T'HH:mm:ss.SSSXXX")` formats and parses as SimpleDateFormat does for the
letters of the usual timestamp patterns: `yyyy`, `yy`, `MM`, `dd`, `HH`, `mm`, `ss`, `SSS`
(milliseconds), `XXX` (`Z` or `+01:00`) and `Z` (`+0000`); text in single quotes is literal and
`''` is a quote. Any other pattern letter, or another count of these (`M`, `MMM`, `EEE`), is a
DateFormatError that names it. Parsing reads through Python's strptime: a two-digit year pivots
as Python's does (69-99 are 19xx), where Java's pivots 80 years back from today; and text after
the pattern is an error, where Java's parse ignores it.

Connect's logical types, in the JSON converter's encoding that this project's records carry
under those schemas: a Timestamp is epoch milliseconds (int64), a Date whole days since the
epoch (int32), a Time milliseconds since midnight (int32). Without a schema a value says its
type itself: a datetime, a date, a time of day. TimestampConverter's timestamp types (`string`,
`unix`, `Date`, `Time`, `Timestamp`) are named and read here, an instant held as epoch
milliseconds as Java's Date holds it.
"""
from __future__ import annotations

import datetime
from typing import Any, Callable

from engine.connect.api import DataError

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
DAY_MS = 86_400_000

LOGICAL_PACKAGE = "org.apache.kafka.connect.data."
TIMESTAMP, DATE, TIME = LOGICAL_PACKAGE + "Timestamp", LOGICAL_PACKAGE + "Date", LOGICAL_PACKAGE + "Time"
LOGICAL_TYPES = {TIMESTAMP: "Timestamp", DATE: "Date", TIME: "Time"}
TIMESTAMP_TYPES = ("string", "unix", "Date", "Time", "Timestamp")


class DateFormatError(ValueError):
    """A pattern this translator does not read (or SimpleDateFormat would refuse)."""


# Each supported run of letters: how it formats a UTC datetime, and its strptime directive.
_FIELDS: dict[str, tuple[Callable[[datetime.datetime], str], str]] = {
    "yyyy": (lambda m: f"{m.year:04d}", "%Y"),
    "yy": (lambda m: f"{m.year % 100:02d}", "%y"),
    "MM": (lambda m: f"{m.month:02d}", "%m"),
    "dd": (lambda m: f"{m.day:02d}", "%d"),
    "HH": (lambda m: f"{m.hour:02d}", "%H"),
    "mm": (lambda m: f"{m.minute:02d}", "%M"),
    "ss": (lambda m: f"{m.second:02d}", "%S"),
    "SSS": (lambda m: f"{m.microsecond // 1000:03d}", "%f"),
    "XXX": (lambda m: "Z", "%z"),
    "Z": (lambda m: "+0000", "%z"),
}
SUPPORTED = "yyyy, yy, MM, dd, HH, mm, ss, SSS, XXX, Z and 'quoted text'"


def tokens(pattern: str) -> list[tuple[bool, str]]:
    """The pattern as (is_field, text) runs: a run of one repeated letter, or literal text."""
    found: list[tuple[bool, str]] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "'":
            text, i = _quoted(pattern, i)
            found.append((False, text))
        elif char.isascii() and char.isalpha():
            end = i
            while end < len(pattern) and pattern[end] == char:
                end += 1
            found.append((True, pattern[i:end]))
            i = end
        else:
            found.append((False, char))
            i += 1
    return found


def _quoted(pattern: str, start: int) -> tuple[str, int]:
    """The literal text of the quote opening at `start`, and the index after it; `''` is a quote."""
    if pattern.startswith("''", start):
        return "'", start + 2
    text, i = "", start + 1
    while True:
        end = pattern.find("'", i)
        if end < 0:
            raise DateFormatError(f"Unterminated quote in {pattern!r}")
        text += pattern[i:end]
        if not pattern.startswith("''", end):
            return text, end + 1
        text, i = text + "'", end + 2


class DateFormat:
    """One SimpleDateFormat pattern, in UTC: `format(datetime)` and `parse(text)` (an aware
    datetime; ValueError when the text does not match)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.parts: list[tuple[bool, str]] = tokens(pattern)
        for is_field, run in self.parts:
            if is_field and run not in _FIELDS:
                what = "letters" if len(run) > 1 else "letter"
                raise DateFormatError(f"Unsupported pattern {what} '{run}' in {pattern!r}: this worker reads "
                                      f"{SUPPORTED}")
        self.strptime = "".join(_FIELDS[run][1] if is_field else run.replace("%", "%%") for is_field, run in self.parts)

    def format(self, moment: datetime.datetime) -> str:
        moment = as_utc(moment)
        return "".join(_FIELDS[run][0](moment) if is_field else run for is_field, run in self.parts)

    def parse(self, text: str) -> datetime.datetime:
        return as_utc(datetime.datetime.strptime(text, self.strptime))


def as_utc(moment: datetime.datetime) -> datetime.datetime:
    """The moment in UTC; a naive one is read as UTC."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# --- instants as epoch milliseconds, as java.util.Date holds them ---------------------------

def millis(moment: datetime.datetime) -> int:
    return (as_utc(moment) - EPOCH) // datetime.timedelta(milliseconds=1)


def moment(ms: int) -> datetime.datetime:
    return EPOCH + datetime.timedelta(milliseconds=ms)


def date_millis(day: datetime.date) -> int:
    return (day - EPOCH.date()).days * DAY_MS


def time_millis(clock: datetime.time) -> int:
    return ((clock.hour * 60 + clock.minute) * 60 + clock.second) * 1000 + clock.microsecond // 1000


def clock(ms: int) -> datetime.time:
    """The UTC time of day of an instant (naive)."""
    return moment(ms % DAY_MS).time()


_ISO_TIME, _ISO_DATE = DateFormat("HH:mm:ss.SSS'Z'"), DateFormat("yyyy-MM-dd")
_ISO_TIMESTAMP = DateFormat("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def iso_text(ms: int) -> str:
    """An instant as Connect's Values writes a date in a header: a time of day when it falls
    within the epoch's first day, a date at a midnight, else a full timestamp."""
    if ms < DAY_MS:
        return _ISO_TIME.format(moment(ms))
    return (_ISO_DATE if ms % DAY_MS == 0 else _ISO_TIMESTAMP).format(moment(ms))


# --- Connect's timestamp types (TimestampConverter's target.type) ---------------------------

def timestamp_schema(target: str, optional: bool) -> dict:
    """The schema of a timestamp type: Connect's logical schema for Date, Time and Timestamp."""
    schema = {"string": {"type": "string"}, "unix": {"type": "int64"},
              "Date": {"type": "int32", "name": DATE, "version": 1},
              "Time": {"type": "int32", "name": TIME, "version": 1},
              "Timestamp": {"type": "int64", "name": TIMESTAMP, "version": 1}}[target]
    return {**schema, "optional": optional}


def schema_timestamp_type(schema: dict) -> str:
    """The timestamp type a schema says: a logical type by its name, a string, or an int64 (unix)."""
    if schema.get("name") in LOGICAL_TYPES:
        return LOGICAL_TYPES[schema["name"]]
    if schema.get("type") in ("string", "int64"):
        return "string" if schema["type"] == "string" else "unix"
    raise DataError(f"Schema {schema} does not correspond to a known timestamp type format")


def value_timestamp_type(value: Any) -> str:
    """The timestamp type of a value without a schema (a datetime before a date: it is one)."""
    for kind, name in ((datetime.datetime, "Timestamp"), (datetime.date, "Date"), (datetime.time, "Time"),
                       (str, "string")):
        if isinstance(value, kind):
            return name
    if is_int(value):
        return "unix"
    raise DataError(f"TimestampConverter does not support {type(value).__name__} objects as timestamps")


def logical_millis(value: Any, kind: str) -> int:
    """The instant, in epoch milliseconds, of a Date, Time or Timestamp value: a datetime, date
    or time, or the int the JSON converter reads under the logical schema (days, ms of day, ms)."""
    if isinstance(value, datetime.datetime):
        return millis(value)
    if isinstance(value, datetime.date):
        return date_millis(value)
    if isinstance(value, datetime.time):
        return time_millis(value)
    if is_int(value):
        return value * DAY_MS if kind == "Date" else value
    raise DataError(f"Expected {kind} to be a datetime, date or time or its int encoding, but found "
                    f"{type(value).__name__}")


def is_int(value: Any) -> bool:
    """An int that is not a bool (Python's bool is one)."""
    return isinstance(value, int) and not isinstance(value, bool)
