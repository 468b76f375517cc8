"""The one formatting layer: durations, sizes, counts, Kafka's "unlimited" sentinels, timestamps,
and what people type parsed into Kafka's raw units. static/js/units.js implements the same rules;
tests/browser/test_units.py runs it over the cases of this file (CASES) and compares."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from django.template import Context, Template

from console import formatting as f

# (function name, argument, expected): shared with the browser test of static/js/units.js.
CASES = [
    ("duration", 604_800_000, "7 d"), ("duration", 259_200_000, "3 d"), ("duration", 5_400_000, "1 h 30 min"),
    ("duration", 6_922_000, "1 h 55 min"), ("duration", 90_061_000, "1 d 1 h"), ("duration", 65_000, "1 min 5 s"),
    ("duration", 59_500, "1 min"), ("duration", 3_599_999, "1 h"), ("duration", 1500, "1.5 s"),
    ("duration", 1000, "1 s"), ("duration", 250, "250 ms"), ("duration", 0, "0 ms"), ("duration", 0.25, "0.3 ms"),
    ("duration", -90_000, "-1 min 30 s"), ("duration", None, "—"),
    ("size", 0, "0 B"), ("size", 512, "512 B"), ("size", 1024, "1 KiB"), ("size", 2_000_000, "1.9 MiB"),
    ("size", 1_048_576, "1 MiB"), ("size", 1_073_741_824, "1 GiB"), ("size", 157_286_400, "150 MiB"),
    ("size", 15_938_355, "15.2 MiB"), ("size", -299_056_761, "-285 MiB"), ("size", 1023.9, "1 KiB"),
    ("size", None, "—"),
    ("count", 51_234, "51,234"), ("count", 0, "0"), ("count", 1234.5, "1,235"),
    ("rate", 0.8, "0.8/s"), ("rate", 0.25, "0.3/s"), ("rate", 1234.5, "1,235/s"), ("rate", 0, "0/s"),
    ("percent", 12.345, "12.3 %"),
    ("percent_change", 24.3, "+24 %"), ("percent_change", -43.6, "-44 %"), ("percent_change", 0.9, "+1 %"),
    ("percent_change", 0.4, "0 %"), ("percent_change", -0.4, "0 %"), ("percent_change", 1234.5, "+1,235 %"),
    ("percent_change", None, "—"),
]
PARSE_CASES = [
    ("3d", "ms", 259_200_000), ("1h30min", "ms", 5_400_000), ("1h 30min", "ms", 5_400_000), ("500", "ms", 500),
    ("1.5s", "ms", 1500), ("10 min", "ms", 600_000), ("2w", "ms", 1_209_600_000), ("-1", "ms", -1),
    ("3d", "h", 72), ("90min", "min", 90), ("1h", "s", 3600),
]
# A rate that names what it counts: the noun's plural, its singular for exactly one.
RATE_NOUN_CASES = [(12, "12 records/s"), (1, "1 record/s"), (0, "0 records/s"), (0.5, "0.5 records/s"),
                   (1234.5, "1,235 records/s"), (None, "—")]
SIZE_CASES = [("10MB", 10_000_000), ("10MiB", 10_485_760), ("10M", 10_485_760), ("512", 512), ("1.5KB", 1500),
              ("1.5k", 1536), ("1 GiB", 1_073_741_824), ("2gb", 2_000_000_000)]


@pytest.mark.parametrize("name, argument, expected", CASES)
def test_display(name, argument, expected):
    assert getattr(f, name)(argument) == expected


@pytest.mark.parametrize("per_second, expected", RATE_NOUN_CASES)
def test_a_rate_names_what_it_counts(per_second, expected):
    assert f.rate(per_second, "record") == expected


@pytest.mark.parametrize("text, unit, expected", PARSE_CASES)
def test_durations_typed_by_people(text, unit, expected):
    assert f.parse_duration(text, unit) == expected


@pytest.mark.parametrize("text, expected", SIZE_CASES)
def test_sizes_typed_by_people(text, expected):
    assert f.parse_size(text) == expected


@pytest.mark.parametrize("text, unit, sentence", [
    ("3x", "ms", "“3x” is not a duration: write a number with a unit, such as 3d"),
    ("1h 30", "ms", "“1h 30” is not a duration"),
    ("1.5ms", "ms", "“1.5ms” is not a whole number of milliseconds: it is 1.5."),
    ("90min", "h", "“90min” is not a whole number of hours: it is 1.5."),
    ("", "ms", "“” is not a duration"),
])
def test_a_duration_that_is_not_one_is_a_sentence(text, unit, sentence):
    with pytest.raises(f.UnitError) as error:
        f.parse_duration(text, unit)
    assert str(error.value).startswith(sentence)


def test_a_size_that_is_not_one_is_a_sentence():
    with pytest.raises(f.UnitError, match="“ten” is not a size: write a number with a unit"):
        f.parse_size("ten")
    with pytest.raises(f.UnitError, match="is 1.5 bytes: a size is a whole number of bytes"):
        f.parse_size("1.5B")


@pytest.mark.parametrize("name, raw, human, with_unit", [
    ("retention.ms", "604800000", "7 d", "604800000 ms (7 d)"),
    ("retention.ms", "-1", "unlimited", "-1 (unlimited)"),
    ("log.retention.hours", "168", "7 d", "168 h (7 d)"),
    ("retention.bytes", "-1", "unlimited", "-1 (unlimited)"),
    ("segment.bytes", "1073741824", "1 GiB", "1073741824 B (1 GiB)"),
    ("max.compaction.lag.ms", "9223372036854775807", "unlimited", "9223372036854775807 (unlimited)"),
    ("flush.messages", "9223372036854775807", "unlimited", "9223372036854775807 (unlimited)"),
    ("max.connections", "2147483647", "unlimited", "2147483647 (unlimited)"),
    ("producer_byte_rate", "1048576.0", "1 MiB/s", "1048576.0 B/s (1 MiB/s)"),
    ("request_percentage", "1.7976931348623157E308", "unlimited", "1.7976931348623157E308 (unlimited)"),
    ("cleanup.policy", "delete", None, "delete"),
    ("min.insync.replicas", "2", None, "2"),
    ("segment.ms", "-1", "-1 ms", "-1 ms"),           # -1 is no sentinel for segment.ms
    # -2: "use the total retention", not an amount of bytes or milliseconds.
    ("log.local.retention.ms", "-2", "same as log.retention.ms", "-2 (same as log.retention.ms)"),
    ("log.local.retention.bytes", "-2", "same as log.retention.bytes", "-2 (same as log.retention.bytes)"),
    ("local.retention.ms", "-2", "same as retention.ms", "-2 (same as retention.ms)"),
    ("local.retention.bytes", "-2", "same as retention.bytes", "-2 (same as retention.bytes)"),
    ("local.retention.ms", "-1", "unlimited", "-1 (unlimited)"),
    ("log.local.retention.bytes", "1073741824", "1 GiB", "1073741824 B (1 GiB)"),
    ("socket.send.buffer.bytes", "-1", "the OS default", "-1 (the OS default)"),
    ("compression.gzip.level", "-1", "gzip's default, level 6", "-1 (gzip's default, level 6)"),
    ("compression.gzip.level", "9", None, "9"),
    ("compression.zstd.level", "-1", None, "-1"),                  # a real zstd level
    # Sizes and durations whose names carry no unit.
    ("log.cleaner.dedupe.buffer.size", "134217728", "128 MiB", "134217728 B (128 MiB)"),
    ("log.cleaner.io.buffer.size", "524288", "512 KiB", "524288 B (512 KiB)"),
    ("sasl.server.max.receive.size", "524288", "512 KiB", "524288 B (512 KiB)"),
    ("sasl.kerberos.min.time.before.relogin", "60000", "1 min", "60000 ms (1 min)"),
    # Integer.MAX_VALUE is Kafka's "no limit" for these counts, as for max.connections.
    ("max.connection.creation.rate", "2147483647", "unlimited", "2147483647 (unlimited)"),
    ("max.connection.creation.rate", "100", "100", "100"),
    ("group.max.size", "2147483647", "unlimited", "2147483647 (unlimited)"),
    ("group.consumer.max.size", "2147483647", "unlimited", "2147483647 (unlimited)"),
    # Zero in the config's own unit.
    ("log.roll.jitter.hours", "0", "0 h", "0 h"),
    ("offsets.retention.minutes", "0", "0 min", "0 min"),
    ("log.roll.jitter.ms", "0", "0 ms", "0 ms"),
])
def test_kafka_config_values(name, raw, human, with_unit):
    assert f.config_human(name, raw) == human
    assert f.config_with_unit(name, raw) == with_unit


# How a config's doc line (kafka_rules/config_docs.py) names its unit, and the unit it means.
DOC_UNITS = {" in bytes": "bytes", "bytes per second": "bytes/s", " in ms": "ms", " in seconds": "s",
             " in minutes": "min", " in hours": "h"}


def test_every_numeric_config_the_engine_describes_is_shown_in_its_unit():
    """Each broker and topic config the engine answers DescribeConfigs with: a size, duration
    or rate its doc line gives a unit for is shown in that unit (not as a bare number, nor a
    duration of hours read as milliseconds)."""
    from engine.config import BROKER_CONFIGS, TOPIC_CONFIGS, TYPE_DOUBLE, TYPE_INT, TYPE_LONG, TYPE_SHORT
    from engine.dynamic_config import KAFKA_ONLY_DYNAMIC
    from kafka_rules.config_docs import broker_config_doc, topic_config_doc

    numeric = (TYPE_INT, TYPE_LONG, TYPE_SHORT, TYPE_DOUBLE)
    configs = [(n, d.type, d.default, broker_config_doc(n)) for n, d in BROKER_CONFIGS.items()]
    configs += [(n, t, default, broker_config_doc(n)) for n, (t, default) in KAFKA_ONLY_DYNAMIC.items()]
    configs += [(n, d.type, d.default, topic_config_doc(n)) for n, d in TOPIC_CONFIGS.items()]
    wrong = []
    for name, config_type, default, doc in configs:
        if config_type not in numeric:
            continue
        said = {unit for words, unit in DOC_UNITS.items() if words in (doc or "").lower()}
        if said and f.config_unit(name) not in said:
            wrong.append((name, f.config_unit(name), sorted(said)))
    assert wrong == []
    # The names the doc lines leave out, checked by hand against Kafka's configuration reference.
    assert {n: f.config_unit(n) for n in ("sasl.kerberos.min.time.before.relogin", "sasl.server.max.receive.size",
                                          "log.cleaner.dedupe.buffer.size", "log.cleaner.io.buffer.size",
                                          "log.local.retention.ms", "log.local.retention.bytes",
                                          "max.connection.creation.rate", "log.roll.jitter.hours")} == {
        "sasl.kerberos.min.time.before.relogin": "ms", "sasl.server.max.receive.size": "bytes",
        "log.cleaner.dedupe.buffer.size": "bytes", "log.cleaner.io.buffer.size": "bytes",
        "log.local.retention.ms": "ms", "log.local.retention.bytes": "bytes",
        "max.connection.creation.rate": "count", "log.roll.jitter.hours": "h"}


@pytest.mark.parametrize("name, typed, sent", [
    ("retention.ms", "3d", "259200000"), ("retention.ms", "unlimited", "-1"), ("retention.ms", "-1", "-1"),
    ("log.retention.hours", "3d", "72"), ("segment.bytes", "1GiB", "1073741824"),
    ("max.compaction.lag.ms", "forever", "9223372036854775807"), ("cleanup.policy", " compact ", "compact"),
    ("producer_byte_rate", "10MiB", "10485760"), ("flush.messages", "1000", "1000"),
    # An INT config's "no limit" is Integer.MAX_VALUE: Long.MAX_VALUE would not parse as an INT.
    ("max.connections", "unlimited", "2147483647"), ("max.connection.creation.rate", "unlimited", "2147483647"),
    ("log.roll.jitter.hours", "0", "0"), ("log.local.retention.ms", "-2", "-2"),
])
def test_config_values_typed_by_people_become_kafkas_raw_units(name, typed, sent):
    assert f.parse_config_value(name, typed) == sent


def test_timestamps_in_local_time_with_their_offset_and_utc_on_hover():
    moment = datetime(2026, 11, 23, 14, 3, 5, tzinfo=timezone.utc)
    paris = timezone(timedelta(hours=1))
    assert f.timestamp(moment, tz=paris) == "2026-11-23 15:03:05 +01:00"
    assert f.timestamp(1_795_442_585_000) == "2026-11-23 14:03:05 +00:00"       # Kafka's epoch ms
    assert f.timestamp_utc(moment.astimezone(paris)) == "2026-11-23 14:03:05 UTC"
    assert f.ago(moment, now=moment + timedelta(seconds=130)) == "2 min ago"
    assert f.ago(moment, now=moment + timedelta(milliseconds=300)) == "just now"
    assert f.ago(moment, now=moment - timedelta(seconds=5)) == "in 5 s"
    assert f.ago(moment, now=moment + timedelta(days=3, hours=2)) == "3 d ago"


def test_template_filters_are_built_in():
    moment = datetime(2026, 11, 23, 14, 3, 5, tzinfo=timezone.utc)
    html = Template('{{ ms|duration }} · {{ b|size }} · {{ n|count }} · {{ r|config_value:"retention.ms" }} · '
                    '{{ h|config_with_unit:"log.retention.hours" }} · {{ t|when }}').render(
        Context({"ms": 604_800_000, "b": 2_000_000, "n": 51234, "r": "259200000", "h": "168", "t": moment}))
    assert html.startswith('7 d · 1.9 MiB · 51,234 · <span class="human" title="259200000 ms (3 d)" '
                           'data-raw="259200000">3 d</span> · 168 h (7 d) · ')
    assert ('<time datetime="2026-11-23T14:03:05+00:00" data-when title="2026-11-23 14:03:05 UTC">'
            '2026-11-23 14:03:05 +00:00</time>') in html
    assert '<small class="ago"><time datetime="2026-11-23T14:03:05+00:00" data-ago></time></small>' in html


def test_a_count_names_its_noun_in_the_right_number():
    assert [f.counted(n, "partition") for n in (0, 1, 2, 1024)] == [
        "0 partitions", "1 partition", "2 partitions", "1,024 partitions"]
    assert f.counted(2, "entry", "entries") == "2 entries"


def test_a_time_pasted_from_a_page_reads_as_that_moment():
    """What a page shows (local time with its offset) and its hover (UTC) are both accepted back
    by the messages' start time and the offset reset's date and time."""
    from console.messages.forms import parse_time
    noon = 1_769_860_800_000                                            # 2026-01-31 12:00:00 UTC
    for text in ("2026-01-31 12:00:00 UTC", "2026-01-31T12:00:00Z", "2026-01-31 23:00:00 +11:00",
                 "2026-01-31T12:00:00"):
        assert parse_time(text, label="The start time") == noon, text
    assert f.iso_datetime_text(" 2026-01-31 12:00:00 utc ") == "2026-01-31 12:00:00+00:00"
