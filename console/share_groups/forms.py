"""Forms for the share group actions: they parse and bound the input (a bad date, offset or
config value is a form error, never a 500); the services and Kafka decide the rest."""
from __future__ import annotations

import re

from django import forms

from console.formatting import UnitError, parse_duration
from console.groups.forms import DATETIME_HELP, MAX_OFFSET, ConfirmGroupForm, DeleteOffsetsForm, parse_timestamp_ms
from console.share_groups.reset import SCOPES, TARGETS, ShareResetSpec

__all__ = ["ConfirmGroupForm", "DeleteOffsetsForm", "ShareConfigsForm", "ShareResetForm"]
_BY_DURATION = re.compile(r"^by_duration:[-+]?P(\d+D)?(T(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$", re.IGNORECASE)


class ShareResetForm(forms.Form):
    target = forms.ChoiceField(choices=list(TARGETS.items()), initial="earliest", label="Reset to")
    scope = forms.ChoiceField(choices=list(SCOPES.items()), initial="all")
    topic = forms.CharField(required=False, max_length=249)
    datetime = forms.CharField(required=False, max_length=64, label="Date and time", help_text=DATETIME_HELP)
    offset = forms.IntegerField(required=False, min_value=0, max_value=MAX_OFFSET)

    def clean_datetime(self):
        text = (self.cleaned_data["datetime"] or "").strip()
        return parse_timestamp_ms(text) if text else None

    def clean(self):
        data = super().clean()
        target = data.get("target")
        needed = {"datetime": "datetime", "offset": "offset"}.get(target)
        if needed and needed not in self.errors and data.get(needed) is None:
            self.add_error(needed, f"Give the {self.fields[needed].label or needed} to reset to.")
        if data.get("scope") == "topic" and not (data.get("topic") or "").strip():
            self.add_error("topic", "Name the topic to reset.")
        return data

    def spec(self) -> ShareResetSpec:
        data = self.cleaned_data
        return ShareResetSpec(target=data["target"], scope=data["scope"],
                              topic=data["topic"].strip() if data["scope"] == "topic" else "",
                              offset=data["offset"], timestamp_ms=data["datetime"])


class DurationField(forms.CharField):
    """A duration as people type it (30s, 1 min, 45000): milliseconds for Kafka."""

    def __init__(self, label: str) -> None:
        super().__init__(required=False, max_length=64, label=label,
                         help_text="Such as 30s, 1 min or 45000 (ms); empty: the broker's value.")

    def clean(self, value):
        text = super().clean(value).strip()
        if not text:
            return None
        try:
            ms = parse_duration(text, unit="ms")
        except UnitError as exc:
            raise forms.ValidationError(str(exc)) from None
        if not 1 <= ms <= 2**31 - 1:
            raise forms.ValidationError("Give a duration between 1 ms and 24 days.")
        return ms


def _millis(label: str) -> DurationField:
    return DurationField(label)


class ShareConfigsForm(forms.Form):
    """The share group configs (Kafka's GroupConfig); an empty field reverts to the broker's value."""

    share_auto_offset_reset = forms.CharField(
        required=False, max_length=64, label="share.auto.offset.reset",
        help_text="latest, earliest or by_duration:<ISO-8601 duration> (such as by_duration:PT1H).")
    share_isolation_level = forms.ChoiceField(
        required=False, label="share.isolation.level",
        choices=[("", "(the broker's)"), ("read_uncommitted", "read_uncommitted"), ("read_committed", "read_committed")])
    share_record_lock_duration_ms = _millis("share.record.lock.duration.ms")
    share_delivery_count_limit = forms.IntegerField(required=False, min_value=2, max_value=10,
                                                    label="share.delivery.count.limit")
    share_partition_max_record_locks = forms.IntegerField(required=False, min_value=100, max_value=10000,
                                                          label="share.partition.max.record.locks")
    share_session_timeout_ms = _millis("share.session.timeout.ms")
    share_heartbeat_interval_ms = _millis("share.heartbeat.interval.ms")

    def clean_share_auto_offset_reset(self):
        value = (self.cleaned_data["share_auto_offset_reset"] or "").strip()
        if value and value not in ("latest", "earliest") and not _BY_DURATION.match(value):
            raise forms.ValidationError("Use latest, earliest or by_duration:<ISO-8601 duration>, such as "
                                        "by_duration:PT1H or by_duration:P1DT12H.")
        return value

    def values(self) -> dict[str, str | None]:
        """Config name -> value, None for the broker's."""
        out = {}
        for field, value in self.cleaned_data.items():
            name = self.fields[field].label
            out[name] = None if value in (None, "") else str(value)
        return out

    @classmethod
    def initial_from(cls, configs) -> dict:
        """The form's initial values: the group's own overrides only."""
        by_name = {c.name: c for c in configs}
        initial = {}
        for field, definition in cls.base_fields.items():
            entry = by_name.get(definition.label)
            if entry is not None and entry.source == "DYNAMIC_GROUP_CONFIG":
                initial[field] = entry.value
        return initial
