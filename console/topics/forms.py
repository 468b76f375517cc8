"""Forms for the topic admin actions: they parse and bound the input, services decide."""
from __future__ import annotations

import hashlib

from django import forms

from console.topics.services import MAX_PARTITIONS
from console.unit_fields import clean_config_value, config_value_attrs


def parse_config_lines(text: str) -> dict[str, str]:
    """`name=value` per line; blank lines and lines starting with # are skipped."""
    configs: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, value = line.partition("=")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            raise forms.ValidationError(f"Line {number}: expected name=value, got {line!r}.")
        if name in configs:
            raise forms.ValidationError(f"Line {number}: {name} is given twice.")
        try:
            configs[name] = clean_config_value(name, value)
        except forms.ValidationError as error:
            raise forms.ValidationError(f"Line {number}: {error.messages[0]}") from None
    return configs


def config_lines(configs: dict[str, str]) -> str:
    return "\n".join(f"{name}={value}" for name, value in sorted(configs.items()))


class ConfigLinesField(forms.CharField):
    widget = forms.Textarea(attrs={"rows": 6, "cols": 60, "spellcheck": "false"})

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("help_text", "One name=value per line, with Kafka's topic config names "
                                       "(retention.ms=86400000 or retention.ms=1d, segment.bytes=64MiB, "
                                       "cleanup.policy=compact, ...).")
        super().__init__(strip=False, **kwargs)

    def clean(self, value):
        return parse_config_lines(super().clean(value) or "")


class TopicCreateForm(forms.Form):
    """A new topic. `previewed` is the topic the cluster checked (validate_only): the creation
    goes through only when it is still the topic in the form."""

    name = forms.RegexField(regex=r"^[a-zA-Z0-9._-]{1,249}$", max_length=249,
                            error_messages={"invalid": "Use 1-249 of a-z, A-Z, 0-9, '.', '_' and '-'."})
    partitions = forms.IntegerField(min_value=1, max_value=MAX_PARTITIONS, initial=3)
    replication_factor = forms.IntegerField(min_value=1, max_value=100, initial=1)
    configs = ConfigLinesField()
    previewed = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, defaults=None, **kwargs):
        """`defaults` (topics.selectors.CreateDefaults): the cluster's own, filled in and named,
        so that a topic is not created with one replica on a cluster that keeps three."""
        super().__init__(*args, **kwargs)
        if defaults is None:
            return
        if defaults.partitions:
            self.initial.setdefault("partitions", defaults.partitions)
            self.fields["partitions"].help_text = f"The cluster's default (num.partitions): {defaults.partitions}."
        if defaults.replication_factor:
            self.initial.setdefault("replication_factor", defaults.replication_factor)
            brokers = f", on {defaults.brokers} broker{'' if defaults.brokers == 1 else 's'} up"
            self.fields["replication_factor"].help_text = (
                f"The cluster's default (default.replication.factor): {defaults.replication_factor}{brokers}.")

    def clean_name(self):
        name = self.cleaned_data["name"]
        if name in (".", ".."):
            raise forms.ValidationError("'.' and '..' are not legal topic names.")
        return name

    @property
    def change_marker(self) -> str:
        data = self.cleaned_data
        spec = "\n".join([data["name"], str(data["partitions"]), str(data["replication_factor"]),
                          config_lines(data["configs"])])
        return hashlib.sha256(spec.encode()).hexdigest()[:32]


class TopicDeleteForm(forms.Form):
    confirmation = forms.CharField(label="Type the topic's name to confirm", max_length=249)
    not_done = "the topic was not deleted"

    def __init__(self, *args, topic: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.topic = topic

    def clean_confirmation(self):
        value = self.cleaned_data["confirmation"].strip()
        if value != self.topic:
            raise forms.ValidationError(f"That is not {self.topic}: {self.not_done}.")
        return value


class TopicDeleteRecordsForm(TopicDeleteForm):
    """Blank partition: every partition; blank offset: up to the end (the high watermark)."""

    partition = forms.IntegerField(required=False, min_value=0, max_value=MAX_PARTITIONS - 1,
                                   label="Partition (blank: all partitions)")
    before_offset = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1,
                                       label="Delete records before offset (blank: all of them)")
    field_order = ["partition", "before_offset", "confirmation"]
    not_done = "no record was deleted"

    def clean(self):
        data = super().clean()
        if data.get("before_offset") is not None and data.get("partition") is None:
            self.add_error("before_offset", "An offset applies to one partition: choose it, or leave the offset "
                                            "blank to empty every partition.")
        return data




class TopicConfigValueForm(forms.Form):
    """One config's new value, or back to its default. `previewed` is the change the diff showed:
    a save goes through only when it is still the change in the form. A value in a person's
    units ("3d" for retention.ms, "1GiB" for segment.bytes) is cleaned to Kafka's raw one."""

    value = forms.CharField(max_length=10_000, required=False, strip=False, label="New value")
    reset = forms.BooleanField(required=False, label="Remove the topic's override (back to the default)")
    previewed = forms.CharField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, config: str, can_reset: bool = True, **kwargs):
        """`can_reset`: the value is an override, which the form may remove (else there is none
        to remove, and no box to tick)."""
        super().__init__(*args, **kwargs)
        self.config = config
        self.fields["value"].widget.attrs.update(config_value_attrs(config))
        if not can_reset:
            del self.fields["reset"]

    def clean(self):
        data = super().clean()
        if not data.get("reset") and not (data.get("value") or "").strip():
            raise forms.ValidationError("Give a value, or tick the box to go back to the default."
                                        if "reset" in self.fields else "Give a value.")
        if not data.get("reset") and "value" in data:
            try:
                data["value"] = clean_config_value(self.config, data["value"])
            except forms.ValidationError as error:
                self.add_error("value", error)
        return data

    @property
    def new_value(self) -> str | None:
        return None if self.cleaned_data.get("reset") else self.cleaned_data["value"]

    @property
    def change_marker(self) -> str:
        """What `previewed` holds for this change: "reset", or "set:" and the value."""
        return "reset" if self.new_value is None else "set:" + self.new_value


class TopicPartitionsForm(forms.Form):
    """`previewed`: the total the cluster checked (validate_only) and the page warned about."""

    total_partitions = forms.IntegerField(min_value=1, max_value=MAX_PARTITIONS,
                                          label="New total number of partitions")
    previewed = forms.CharField(required=False, widget=forms.HiddenInput)


def list_filters(request) -> dict:
    """The list page's filters from the query string, as the selector takes them (the page and the API)."""
    return {"search": request.GET.get("q", ""), "status": request.GET.get("status", ""),
            "include_internal": request.GET.get("internal") in ("1", "on", "true"),
            "page": request.GET.get("page", 1)}
