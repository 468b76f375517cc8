"""Forms for the share group actions: they parse and bound the input (a bad date, offset or
config value is a form error, never a 500); the services and Kafka decide the rest."""
from __future__ import annotations

import re

from django import forms
from django.utils.html import escape

from console.groups.forms import (DATETIME_HELP, MAX_OFFSET, ConfirmGroupForm, DeleteOffsetsForm, DurationField,
                                  GroupConfigsForm, parse_timestamp_ms)
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


class ShareConfigsForm(GroupConfigsForm):
    """The share group configs (Kafka's GroupConfig); an empty field reverts to the broker's value."""

    share_auto_offset_reset = forms.CharField(
        required=False, max_length=64, label="share.auto.offset.reset",
        help_text=escape("latest, earliest or by_duration:<ISO-8601 duration> (such as by_duration:PT1H)."))
    share_isolation_level = forms.ChoiceField(
        required=False, label="share.isolation.level",
        choices=[("", "(the broker's)"), ("read_uncommitted", "read_uncommitted"), ("read_committed", "read_committed")])
    share_record_lock_duration_ms = DurationField("share.record.lock.duration.ms")
    share_delivery_count_limit = forms.IntegerField(required=False, min_value=2, max_value=10,
                                                    label="share.delivery.count.limit")
    share_partition_max_record_locks = forms.IntegerField(required=False, min_value=100, max_value=10000,
                                                          label="share.partition.max.record.locks")
    share_session_timeout_ms = DurationField("share.session.timeout.ms")
    share_heartbeat_interval_ms = DurationField("share.heartbeat.interval.ms")

    def clean_share_auto_offset_reset(self):
        value = (self.cleaned_data["share_auto_offset_reset"] or "").strip()
        if value and value not in ("latest", "earliest") and not _BY_DURATION.match(value):
            raise forms.ValidationError("Use latest, earliest or by_duration:<ISO-8601 duration>, such as "
                                        "by_duration:PT1H or by_duration:P1DT12H.")
        return value
