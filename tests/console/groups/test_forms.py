"""The reset form's pickers: the date-time picker's value is read in the zone the browser sends."""
from datetime import UTC, datetime

import pytest
from django import forms

from console.groups.forms import ResetForm, parse_timestamp_ms

NOON_UTC = int(datetime(2026, 1, 31, 12, 0, tzinfo=UTC).timestamp() * 1000)


@pytest.mark.parametrize("text, zone, expected", [
    ("2026-01-31T12:00", "", NOON_UTC),                        # no zone anywhere: UTC
    ("2026-01-31T14:00", "+02:00", NOON_UTC),                  # the browser's offset
    ("2026-01-31T07:00:00", "-05:00", NOON_UTC),
    ("2026-01-31T12:00Z", "+02:00", NOON_UTC),                 # a zone in the text wins
    ("2026-01-31T13:00+01:00", "", NOON_UTC),
    ("2026-01-31T12:00", "02:00", NOON_UTC),                   # not an offset: ignored, UTC
    ("2026-01-31 12:00:00 UTC", "+02:00", NOON_UTC),           # as the pages write a time on hover
    ("2026-01-31 23:00:00 +11:00", "", NOON_UTC),              # as the pages show it
])
def test_picker_values_are_read_in_the_browsers_zone(text, zone, expected):
    assert parse_timestamp_ms(text, zone=zone) == expected


def test_a_bad_date_is_a_form_error():
    with pytest.raises(forms.ValidationError, match="is not a date and time"):
        parse_timestamp_ms("yesterday")
    form = ResetForm({"target": "datetime", "scope": "all", "datetime": "2026-01-31T14:00", "zone": "+02:00"})
    assert form.is_valid() and form.spec().timestamp_ms == NOON_UTC
    html = ResetForm(topics=["orders", "payments"]).as_p()
    assert 'type="datetime-local"' in html and 'list="reset-topics"' in html
