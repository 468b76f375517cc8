"""A share group reset in a person's words, as its preview, message and audit entry say it."""
from datetime import UTC, datetime

from console.share_groups.reset import ShareResetSpec

NOON_UTC = int(datetime(2026, 1, 31, 12, 0, tzinfo=UTC).timestamp() * 1000)


def test_the_summary_names_the_time_in_utc_not_in_epoch_milliseconds():
    assert ShareResetSpec(target="datetime", timestamp_ms=NOON_UTC, scope="topic", topic="orders").summary() == \
        "the first offset at or after 2026-01-31 12:00:00 UTC, topic orders"
    assert ShareResetSpec(target="earliest").summary() == "the earliest offset, every topic"
