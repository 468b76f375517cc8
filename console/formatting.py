"""Numbers as people read them: the console's one formatting layer.

Every page, live fragment and chart label goes through these pure functions (templates through
the filters of console/templatetags/units.py, live-updated numbers in the browser through
static/js/units.js, which implements the same rules). None of them touches Django.

Display (each returns a string; None gives "—"):
    duration(ms)              604800000 -> "7 d"; 5400000 -> "1 h 30 min"; 1500 -> "1.5 s"; 250 -> "250 ms"
    duration_seconds(s)       6922 -> "1 h 55 min"
    size(n)                   2000000 -> "1.9 MiB"; 0 -> "0 B"; -299056761 -> "-285 MiB" (IEC, 1024-based)
    size_rate(n)              2000000 -> "1.9 MiB/s"
    size_change(n)            1300000000 -> "+1.2 GiB"; -299056761 -> "-285 MiB"
    count(n)                  51234 -> "51,234"
    rate(per_second)          0.8 -> "0.8/s"; 1234.5 -> "1,235/s"
    rate(per_second, noun)    12 -> "12 records/s"; 1 -> "1 record/s" (noun="record")
    percent(x)                12.345 -> "12.3 %"
    percent_change(x)         24.3 -> "+24 %"; -43.6 -> "-44 %"; 0.4 -> "0 %" (a signed deviation, whole %)
    timestamp(when)           local time with its UTC offset: "2026-11-23 15:03:05 +01:00"
    timestamp_utc(when)       "2026-11-23 14:03:05 UTC" (the hover text)
    ago(when, now=None)       "2 min ago", "just now", "in 5 s"
  `when` is an aware datetime, or epoch milliseconds as Kafka timestamps are.

Kafka configs (a value and its config name; the unit comes from Kafka's naming: *.ms, *.hours,
*.bytes, *_byte_rate, ...):
    config_unit(name)         "ms" | "s" | "min" | "h" | "bytes" | "bytes/s" | "count" | None
    is_unlimited(name, raw)   True for Kafka's "no limit" sentinels where the config means unlimited:
                              9223372036854775807 (Long.MAX_VALUE), 2147483647 (Integer.MAX_VALUE),
                              1.7976931348623157e308 (Double.MAX_VALUE), and -1 for the retention configs
    sentinel_meaning(name, raw)  "same as log.retention.ms" for -2 of log.local.retention.ms,
                              "the OS default" for -1 of socket.send.buffer.bytes, "gzip's default, level 6"
                              for -1 of compression.gzip.level; None for an amount
    config_human(name, raw)   "7 d", "1 GiB", "unlimited", "0 h"; None when the value has no human form
    config_with_unit(name, raw)  "168 h (7 d)", "604800000 ms (7 d)", "-1 (unlimited)",
                              "-2 (same as log.retention.ms)", or raw as is

Parsing what people type into Kafka's raw units (server-side parsing is authoritative; the JS
only previews). Each raises UnitError, whose message is a sentence for the form:
    parse_duration(text, unit="ms")   "3d" -> 259200000; "1h30min" -> 5400000; "500" -> 500 (bare: the unit)
    parse_size(text)                  "10MB" -> 10000000; "10MiB" or "10M" -> 10485760; "512" -> 512
    parse_config_value(name, text)    "3d" for retention.ms -> "259200000"; "unlimited" -> "-1";
                                      values of configs without a unit come back unchanged
"""
from __future__ import annotations

import math
import re
from datetime import datetime, timezone, tzinfo

LONG_MAX = 9_223_372_036_854_775_807
INT_MAX = 2_147_483_647
DOUBLE_MAX = 1.7976931348623157e308
UNLIMITED = "unlimited"
NONE = "—"

_MS = {"d": 86_400_000, "h": 3_600_000, "min": 60_000, "s": 1000}
_SIZE_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")


class UnitError(ValueError):
    """A value a person typed that is not a duration or a size: its message is a sentence."""


# --- display ---------------------------------------------------------------------------------

def _round(number: float, decimals: int = 0) -> float:
    """Half away from zero for positives (2.5 -> 3), as static/js/units.js rounds: not Python's
    half-to-even, so the server and the browser write the same number."""
    factor = 10 ** decimals
    return math.floor(number * factor + 0.5 + 1e-9) / factor


def _trim(number: float, decimals: int) -> str:
    """12.0 -> "12", 1.25 -> "1.3" (decimals=1), with thousands separators."""
    text = f"{_round(number, decimals):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def duration(ms: float | int | None) -> str:
    """A span of milliseconds in its two largest units ("1 h 55 min"), exact units alone ("7 d")."""
    if ms is None:
        return NONE
    ms = float(ms)
    if math.isnan(ms):
        return NONE
    if ms < 0:
        return "-" + duration(-ms)
    if ms < 1000:
        return f"{_trim(ms, 0 if ms >= 10 else 1)} ms"
    if ms < 10_000 and ms % 1000:
        return f"{_trim(ms / 1000, 1)} s"
    names = list(_MS)
    for index, name in enumerate(names):
        unit = _MS[name]
        if ms < unit:
            continue
        smaller = _MS[names[index + 1]] if index + 1 < len(names) else unit
        rounded = _round(ms / smaller) * smaller            # rounded once, in the smaller unit
        if index > 0 and rounded >= _MS[names[index - 1]]:
            return duration(rounded)                      # 59.6 min rounds up to "1 h"
        big, small = divmod(rounded, unit)
        text = f"{_trim(big, 0)} {name}"
        return text + (f" {_trim(small // smaller, 0)} {names[index + 1]}" if small else "")
    raise AssertionError("unreachable")  # pragma: no cover - ms >= 1000 matches "s"


def duration_seconds(seconds: float | int | None) -> str:
    return NONE if seconds is None else duration(float(seconds) * 1000)


def size(n: float | int | None) -> str:
    """Bytes in IEC units (1024-based, as operating systems and Kafka's tools count disk)."""
    if n is None:
        return NONE
    n = float(n)
    if n < 0:
        return "-" + size(-n)
    if _round(n) < 1024:
        return f"{_trim(n, 0)} B"
    exponent, value = 0, n
    while value >= 1024 and exponent + 1 < len(_SIZE_UNITS):
        exponent, value = exponent + 1, value / 1024
    decimals = 1 if value < 100 else 0
    if _round(value, decimals) >= 1024 and exponent + 1 < len(_SIZE_UNITS):
        exponent, value, decimals = exponent + 1, value / 1024, 1
    return f"{_trim(value, decimals)} {_SIZE_UNITS[exponent]}"


def size_change(n: float | int | None) -> str:
    """A signed change in bytes: "+1.2 GiB", "-285 MiB", "0 B"."""
    if n is None:
        return NONE
    return ("+" if n > 0 else "") + size(n)


def size_rate(n: float | int | None) -> str:
    return NONE if n is None else size(n) + "/s"


def count(n: float | int | None) -> str:
    if n is None:
        return NONE
    return f"{n:,}" if isinstance(n, int) else _trim(float(n), 0)


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 partition`, `1,024 partitions`: a count with its noun, never `partition(s)`."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def rate(per_second: float | int | None, noun: str = "") -> str:
    """Events per second: one decimal below 100, whole numbers above; with a noun, what they are
    ("12 records/s", "1 record/s")."""
    if per_second is None:
        return NONE
    value = float(per_second)
    number = _trim(value, 1 if abs(value) < 100 else 0)
    if not noun:
        return f"{number}/s"
    return f"{number} {noun if number == '1' else noun + 's'}/s"


def percent(value: float | int | None) -> str:
    return NONE if value is None else f"{_trim(float(value), 1)} %"


def percent_change(value: float | int | None) -> str:
    """A signed deviation in whole percent: "+24 %", "-44 %"; "0 %" when it rounds to nothing."""
    if value is None:
        return NONE
    value = float(value)
    if math.isnan(value):
        return NONE
    magnitude = _trim(abs(value), 0)
    if magnitude == "0":
        return "0 %"
    return f"{'+' if value > 0 else '-'}{magnitude} %"


def _as_datetime(when: datetime | int | float) -> datetime:
    if isinstance(when, datetime):
        if when.tzinfo is None:
            raise ValueError("a naive datetime has no known time zone: pass an aware one")
        return when
    return datetime.fromtimestamp(float(when) / 1000, tz=timezone.utc)


def timestamp(when: datetime | int | float | None, *, tz: tzinfo | None = None) -> str:
    """Local time (of `tz`, else the datetime's own zone) with its UTC offset."""
    if when is None:
        return NONE
    moment = _as_datetime(when)
    if tz is not None:
        moment = moment.astimezone(tz)
    offset = moment.strftime("%z")
    return moment.strftime("%Y-%m-%d %H:%M:%S ") + f"{offset[:3]}:{offset[3:]}"


def timestamp_utc(when: datetime | int | float | None) -> str:
    if when is None:
        return NONE
    return _as_datetime(when).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def ago(when: datetime | int | float | None, *, now: datetime | None = None) -> str:
    """How long ago (or ahead) `when` is, in the largest whole unit: "2 min ago", "in 5 s"."""
    if when is None:
        return NONE
    moment = _as_datetime(when)
    seconds = ((now or datetime.now(timezone.utc)) - moment).total_seconds()
    if abs(seconds) < 1:
        return "just now"
    for unit, size_s in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
        if abs(seconds) >= size_s:
            amount = int(abs(seconds) // size_s)
            return f"{amount:,} {unit} ago" if seconds > 0 else f"in {amount:,} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


# --- Kafka configs -----------------------------------------------------------------------------

# Configs whose -1 means "no limit" (Kafka's docs: "-1 means unlimited / no time limit").
_MINUS_ONE_UNLIMITED = frozenset({
    "retention.ms", "retention.bytes", "log.retention.ms", "log.retention.minutes", "log.retention.hours",
    "log.retention.bytes", "local.retention.ms", "local.retention.bytes", "log.local.retention.ms",
    "log.local.retention.bytes", "queued.max.request.bytes",
})
# Integer (not long) configs whose "no limit" is Integer.MAX_VALUE, as Kafka's defaults have it:
# "unlimited" typed for them sends 2147483647 (Long.MAX_VALUE would not parse as an INT).
_INT_MAX_UNLIMITED = frozenset({
    "max.connections", "max.connections.per.ip", "max.connection.creation.rate", "group.max.size",
    "group.consumer.max.size",
})
# Values that stand for something else than an amount, per config (Kafka's docs).
_SENTINELS = {
    "log.local.retention.ms": {-2: "same as log.retention.ms"},
    "log.local.retention.bytes": {-2: "same as log.retention.bytes"},
    "local.retention.ms": {-2: "same as retention.ms"},
    "local.retention.bytes": {-2: "same as retention.bytes"},
    "socket.send.buffer.bytes": {-1: "the OS default"},
    "socket.receive.buffer.bytes": {-1: "the OS default"},
    "send.buffer.bytes": {-1: "the OS default"},
    "receive.buffer.bytes": {-1: "the OS default"},
    # gzip's levels are 1-9; -1 asks the codec for its own default (zlib's level 6). lz4's and zstd's
    # defaults are real levels (9 and 3), and -1 is a valid zstd level, so neither has a sentinel.
    "compression.gzip.level": {-1: "gzip's default, level 6"},
}
# Names that break the suffix rules below: sizes and durations whose name has no unit
# (*.buffer.size, *.receive.size, min.time.before.relogin), counts that would read as sizes.
_UNIT_EXCEPTIONS = {
    "flush.messages": "count", "log.flush.interval.messages": "count", "max.connections": "count",
    "max.connections.per.ip": "count", "max.connection.creation.rate": "count", "group.max.size": "count",
    "group.consumer.max.size": "count", "segment.index.bytes": "bytes",
    "log.retention.check.interval.ms": "ms", "connections.max.reauth.ms": "ms",
    "sasl.kerberos.min.time.before.relogin": "ms", "kafka.metrics.polling.interval.secs": "s",
    "log.cleaner.dedupe.buffer.size": "bytes", "log.cleaner.io.buffer.size": "bytes",
    "offsets.load.buffer.size": "bytes", "transaction.state.log.load.buffer.size": "bytes",
    "share.coordinator.load.buffer.size": "bytes", "sasl.server.max.receive.size": "bytes",
    "batch.size": "bytes", "buffer.memory": "bytes", "max.request.size": "bytes",
    "producer_byte_rate": "bytes/s", "consumer_byte_rate": "bytes/s", "controller_mutation_rate": None,
    "request_percentage": None, "follower.replication.throttled.rate": "bytes/s",
    "leader.replication.throttled.rate": "bytes/s", "replica.alter.log.dirs.io.max.bytes.per.second": "bytes/s",
}
_SUFFIX_UNITS = ((".ms", "ms"), (".hours", "h"), (".minutes", "min"), (".seconds", "s"),
                 (".bytes.per.second", "bytes/s"), (".bytes", "bytes"), (".messages", "count"))
_UNIT_LABELS = {"ms": "ms", "s": "s", "min": "min", "h": "h", "bytes": "B", "bytes/s": "B/s"}
_UNIT_MS = {"ms": 1, "s": 1000, "min": 60_000, "h": 3_600_000}


def config_unit(name: str) -> str | None:
    if name in _UNIT_EXCEPTIONS:
        return _UNIT_EXCEPTIONS[name]
    for suffix, unit in _SUFFIX_UNITS:
        if name.endswith(suffix):
            return unit
    return None


def _number(raw) -> int | float | None:
    """An int when the text is one (Long.MAX_VALUE does not survive a float), else a float."""
    text = str(raw).strip()
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(value) else value


def is_unlimited(name: str, raw) -> bool:
    value = _number(raw)
    if value is None or config_unit(name) is None and name not in _UNIT_EXCEPTIONS:
        return False
    if value in (LONG_MAX, INT_MAX) or value >= DOUBLE_MAX * 0.999_999:
        return True
    return value == -1 and name in _MINUS_ONE_UNLIMITED


def sentinel_meaning(name: str, raw) -> str | None:
    """What a sentinel value of `name` stands for ("same as log.retention.ms" for -2 of
    log.local.retention.ms), or None when the value is an amount."""
    value = _number(raw) if raw is not None else None
    return None if value is None else _SENTINELS.get(name, {}).get(value)


def config_human(name: str, raw) -> str | None:
    """The value in a person's units, or None when the config has none (strings, booleans, ...)."""
    if raw is None:
        return None
    unit = config_unit(name)
    value = _number(raw)
    if value is None:
        return None
    meaning = sentinel_meaning(name, raw)
    if meaning is not None:
        return meaning
    if is_unlimited(name, raw):
        return UNLIMITED
    if unit in _UNIT_MS:
        if value == 0:            # "0 h", not "0 ms", for log.roll.jitter.hours
            return f"0 {_UNIT_LABELS[unit]}"
        return duration(value * _UNIT_MS[unit])
    if unit == "bytes":
        return size(value)
    if unit == "bytes/s":
        return size_rate(value)
    if unit == "count" or (unit is None and name in _UNIT_EXCEPTIONS):
        return count(value) if value == int(value) else _trim(value, 3)
    return None


def config_with_unit(name: str, raw) -> str:
    """The raw value with its unit and, when different, the human form: "168 h (7 d)"."""
    if raw is None:
        return NONE
    human = config_human(name, raw)
    if human is None:
        return str(raw)
    label = _UNIT_LABELS.get(config_unit(name) or "", "")
    sentinel = human == UNLIMITED or sentinel_meaning(name, raw) is not None
    written = str(raw) if sentinel else f"{raw} {label}".strip()
    return written if human == written else f"{written} ({human})"


# --- parsing -----------------------------------------------------------------------------------

def iso_datetime_text(text: str) -> str:
    """A date and time as people paste it, for datetime.fromisoformat: ISO's "Z" and the " UTC"
    of the pages' hover text (timestamp_utc) become "+00:00"; the pages' own "+13:00" stays."""
    text = text.strip()
    if text.upper().endswith("UTC"):
        text = text[:-3].rstrip() + "+00:00"
    return text.replace("Z", "+00:00")


_DURATION_WORDS = {
    "ms": 1, "millisecond": 1, "milliseconds": 1,
    "s": 1000, "sec": 1000, "secs": 1000, "second": 1000, "seconds": 1000,
    "m": 60_000, "min": 60_000, "mins": 60_000, "minute": 60_000, "minutes": 60_000,
    "h": 3_600_000, "hr": 3_600_000, "hrs": 3_600_000, "hour": 3_600_000, "hours": 3_600_000,
    "d": 86_400_000, "day": 86_400_000, "days": 86_400_000,
    "w": 604_800_000, "week": 604_800_000, "weeks": 604_800_000,
}
_SIZE_WORDS = {
    "b": 1, "byte": 1, "bytes": 1,
    "kb": 1000, "mb": 1000**2, "gb": 1000**3, "tb": 1000**4,
    "k": 1024, "kib": 1024, "m": 1024**2, "mib": 1024**2, "g": 1024**3, "gib": 1024**3,
    "t": 1024**4, "tib": 1024**4,
}
_UNLIMITED_WORDS = frozenset({"unlimited", "forever", "never", "infinite", "none", "no limit"})
_TERM = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]*)")
_UNIT_NAMES = {1: "millisecond", 1000: "second", 60_000: "minute", 3_600_000: "hour"}


def _terms(text: str) -> list[tuple[float, str]]:
    """"1h 30min" -> [(1.0, "h"), (30.0, "min")]; None when the text is not number-unit terms."""
    terms, position, text = [], 0, text.strip()
    while position < len(text):
        match = _TERM.match(text, position)
        if not match or match.end() == position:
            return []
        terms.append((float(match.group(1)), match.group(2).lower()))
        position = match.end()
    return terms


def _whole(amount: float, unit_ms: int, text: str) -> int:
    value = amount / unit_ms
    if abs(value - round(value)) > 1e-9:
        raise UnitError(f"“{text}” is not a whole number of {_UNIT_NAMES[unit_ms]}s: "
                        f"it is {_trim(value, 3)}.")
    return int(round(value))


def parse_duration(text: str, unit: str = "ms") -> int:
    """A duration typed by a person, in `unit` (ms, s, min or h). A bare number is in `unit`."""
    unit_ms = _UNIT_MS[unit]
    raw = (text or "").strip()
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    terms = _terms(raw)
    if not terms or any(word not in _DURATION_WORDS for _, word in terms if word) or \
            (len(terms) > 1 and any(not word for _, word in terms)):
        raise UnitError(f"“{raw}” is not a duration: write a number with a unit, such as 3d, 12h, 30min, "
                        f"45s or 500ms, or a plain number of {_UNIT_NAMES[unit_ms]}s.")
    total_ms = sum(amount * (_DURATION_WORDS[word] if word else unit_ms) for amount, word in terms)
    return _whole(total_ms, unit_ms, raw)


def parse_size(text: str) -> int:
    """A size typed by a person, in bytes: kB, MB, GB are powers of 1000; KiB, MiB, GiB (and
    k, m, g alone, as the JVM's flags) powers of 1024. A bare number is bytes."""
    raw = (text or "").strip()
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    terms = _terms(raw)
    if len(terms) != 1 or terms[0][1] not in _SIZE_WORDS:
        raise UnitError(f"“{raw}” is not a size: write a number with a unit, such as 512KiB, 10MB, 1GiB "
                        "(kB, MB, GB count in 1000s; KiB, MiB, GiB in 1024s), or a plain number of bytes.")
    amount, word = terms[0]
    value = amount * _SIZE_WORDS[word]
    if abs(value - round(value)) > 1e-6:
        raise UnitError(f"“{raw}” is {value:g} bytes: a size is a whole number of bytes.")
    return int(round(value))


def parse_config_value(name: str, text: str) -> str:
    """What to send to Kafka for `name` when a person typed `text`: raw units, as a string."""
    raw = (text or "").strip()
    unit = config_unit(name)
    if unit is None:
        return raw
    if raw.lower() in _UNLIMITED_WORDS:
        if name in _MINUS_ONE_UNLIMITED:
            return "-1"
        return str(INT_MAX if name in _INT_MAX_UNLIMITED else LONG_MAX)
    if unit == "count":
        return raw
    if unit in _UNIT_MS:
        return str(parse_duration(raw, unit))
    if unit in ("bytes", "bytes/s"):
        return str(parse_size(raw.removesuffix("/s")))
    return raw  # pragma: no cover - every unit is handled above
