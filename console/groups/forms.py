"""Forms for the group actions: they parse and bound the input (a bad date or offset is a form
error, never a 500); the services decide."""
from __future__ import annotations

import re
from datetime import UTC, datetime

from django import forms

from console.formatting import UnitError, iso_datetime_text, parse_duration
from console.groups.reset import SCOPES, TARGETS, ResetSpec

MAX_OFFSET = 2**63 - 1
DATETIME_HELP = "YYYY-MM-DDTHH:MM[:SS[.sss]], in UTC unless a zone is given (Z or +hh:mm)."
_ZONE = re.compile(r"^[+-](0\d|1[0-4]):[0-5]\d$")
TOPICS_LIST_ID = "reset-topics"           # the <datalist> of topic names the topic field offers


def parse_timestamp_ms(text: str, *, zone: str = "") -> int:
    """Kafka's --to-datetime format (ISO 8601); without a zone in the text, `zone` ("+02:00",
    the browser's offset the picker sends), else UTC. Raises ValidationError."""
    text = text.strip()
    try:
        moment = datetime.fromisoformat(iso_datetime_text(text))
    except ValueError:
        raise forms.ValidationError(f"{text!r} is not a date and time: use {DATETIME_HELP}") from None
    if moment.tzinfo is None:
        moment = datetime.fromisoformat(text + zone) if _ZONE.match(zone) else moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def parse_partitions(text: str) -> tuple[int, ...]:
    """'0,2,5' or '0-3,7'."""
    chosen: set[int] = set()
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        low, dash, high = item.partition("-")
        try:
            first, last = int(low), int(high) if dash else int(low)
        except ValueError:
            raise forms.ValidationError(f"{item!r} is not a partition number or range (such as 0,2,5 or 0-3).") \
                from None
        if first < 0 or last < first or last - first > 100_000:
            raise forms.ValidationError(f"{item!r} is not a valid partition range.")
        chosen.update(range(first, last + 1))
    return tuple(sorted(chosen))


class ResetForm(forms.Form):
    """The pickers: the topic field searches the cluster's topics (a datalist the page fills,
    `topics`), the date and time is the browser's picker in its own time zone (`zone`, which
    static/js/group_reset.js fills; without it the time is UTC, and scripts may give a zone)."""

    target = forms.ChoiceField(choices=list(TARGETS.items()), initial="earliest", label="Reset to")
    scope = forms.ChoiceField(choices=list(SCOPES.items()), initial="all")
    topic = forms.CharField(required=False, max_length=249, widget=forms.TextInput(
        attrs={"list": TOPICS_LIST_ID, "autocomplete": "off", "placeholder": "type to search the topics"}))
    partitions = forms.CharField(required=False, max_length=2000, help_text="Such as 0,2,5 or 0-3.")
    datetime = forms.CharField(required=False, max_length=64, label="Date and time",
                               widget=forms.DateTimeInput(attrs={"type": "datetime-local", "step": "1"}),
                               help_text="In your browser's time zone (UTC without JavaScript); scripts: "
                                         + DATETIME_HELP)
    zone = forms.CharField(required=False, max_length=6, widget=forms.HiddenInput)
    offset = forms.IntegerField(required=False, min_value=0, max_value=MAX_OFFSET)
    shift = forms.IntegerField(required=False, min_value=-MAX_OFFSET, max_value=MAX_OFFSET, label="Shift by",
                               help_text="Negative to re-read, positive to skip.")

    def clean_partitions(self):
        return parse_partitions(self.cleaned_data["partitions"] or "")

    def __init__(self, *args, topics: list[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.topics = list(topics)

    def clean_datetime(self):
        text = (self.cleaned_data["datetime"] or "").strip()
        return parse_timestamp_ms(text, zone=(self.data.get("zone") or "").strip()) if text else None

    def clean(self):
        data = super().clean()
        target, scope = data.get("target"), data.get("scope")
        needed = {"datetime": "datetime", "offset": "offset", "shift": "shift"}.get(target)
        if needed and needed not in self.errors and data.get(needed) is None:
            self.add_error(needed, f"Give the {self.fields[needed].label or needed} to reset to.")
        if scope in ("topic", "partitions") and not data.get("topic"):
            self.add_error("topic", "Name the topic to reset.")
        if scope == "partitions" and "partitions" not in self.errors and not data.get("partitions"):
            self.add_error("partitions", "Choose at least one partition.")
        return data

    def spec(self) -> ResetSpec:
        data = self.cleaned_data
        scope = data["scope"]
        return ResetSpec(target=data["target"], scope=scope, topic=data["topic"].strip() if scope != "all" else "",
                         partitions=data["partitions"] if scope == "partitions" else (),
                         offset=data["offset"], shift=data["shift"], timestamp_ms=data["datetime"])


class ConfirmGroupForm(forms.Form):
    confirmation = forms.CharField(label="Type the group's id to confirm", max_length=2000, strip=False)

    def __init__(self, *args, group_id: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.group_id = group_id

    def clean_confirmation(self):
        value = self.cleaned_data["confirmation"]
        if value != self.group_id:
            raise forms.ValidationError("That is not the group's id: nothing was deleted.")
        return value


class DeleteOffsetsForm(ConfirmGroupForm):
    topic = forms.CharField(max_length=249)


def list_filters(request) -> dict:
    """The list page's filters from the query string, as the selector takes them (the page and the API)."""
    return {"search": request.GET.get("q", ""), "state": request.GET.get("state", ""),
            "topic": request.GET.get("topic", ""), "sort": request.GET.get("sort", "id"),
            "page": request.GET.get("page", 1), "group_type": request.GET.get("type", "")}


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


class GroupConfigsForm(forms.Form):
    """A group's configs on the GROUP resource (Kafka's GroupConfig), one field per config, labelled
    with its name; an empty field reverts the config to the brokers' value."""

    def values(self) -> dict[str, str | None]:
        """Config name -> value, None for the brokers'."""
        return {self.fields[field].label: None if value in (None, "") else str(value)
                for field, value in self.cleaned_data.items()}

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


class ConsumerGroupConfigsForm(GroupConfigsForm):
    """The consumer group configs (KIP-848), within the brokers' group.consumer.min/max.*, which
    Kafka checks."""

    consumer_session_timeout_ms = DurationField("consumer.session.timeout.ms")
    consumer_heartbeat_interval_ms = DurationField("consumer.heartbeat.interval.ms")
