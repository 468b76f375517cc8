"""Form fields that take what people type ("3d", "10MiB", "unlimited") and clean to Kafka's raw
units with console.formatting's parsers. Their widgets carry data-human-unit, so
static/js/units.js previews under the input the raw value that will be sent; the server's
parse here is the one that counts.

    DurationField(unit="ms")       "3d" -> 259200000; a bare number is in `unit`
    SizeField()                    "10MiB" -> 10485760; a bare number is bytes
    config_value_attrs(name)       the widget attributes of an input for Kafka config `name`
    clean_config_value(name, text) "3d" for retention.ms -> "259200000", "unlimited" -> "-1"
"""
from __future__ import annotations

from django import forms

from console import formatting


def _unit_attrs(unit: str, *, unlimited: str | None = None, example: str = "") -> dict:
    attrs = {"data-human-unit": unit, "autocomplete": "off", "spellcheck": "false"}
    if unlimited is not None:
        attrs["data-unlimited"] = unlimited
    if example:
        attrs["placeholder"] = example
    return attrs


class DurationField(forms.CharField):
    def __init__(self, *, unit: str = "ms", min_value: int | None = None, max_value: int | None = None, **kwargs):
        self.unit, self.min_value, self.max_value = unit, min_value, max_value
        kwargs.setdefault("widget", forms.TextInput(attrs=_unit_attrs(unit, example="e.g. 3d, 12h, 30min")))
        super().__init__(**kwargs)

    def clean(self, value):
        text = super().clean(value)
        if text in self.empty_values:
            return None
        try:
            parsed = formatting.parse_duration(text, self.unit)
        except formatting.UnitError as error:
            raise forms.ValidationError(str(error)) from None
        _bounds(parsed, self.min_value, self.max_value, lambda n: formatting.duration(
            n * formatting.parse_duration("1" + self.unit, "ms")))
        return parsed


class SizeField(forms.CharField):
    def __init__(self, *, min_value: int | None = None, max_value: int | None = None, **kwargs):
        self.min_value, self.max_value = min_value, max_value
        kwargs.setdefault("widget", forms.TextInput(attrs=_unit_attrs("bytes", example="e.g. 10MiB, 1GB")))
        super().__init__(**kwargs)

    def clean(self, value):
        text = super().clean(value)
        if text in self.empty_values:
            return None
        try:
            parsed = formatting.parse_size(text.removesuffix("/s"))
        except formatting.UnitError as error:
            raise forms.ValidationError(str(error)) from None
        _bounds(parsed, self.min_value, self.max_value, formatting.size)
        return parsed


def _bounds(value: int, minimum: int | None, maximum: int | None, human) -> None:
    if minimum is not None and value < minimum:
        raise forms.ValidationError(f"{value} ({human(value)}) is below the smallest value allowed, "
                                    f"{minimum} ({human(minimum)}).")
    if maximum is not None and value > maximum:
        raise forms.ValidationError(f"{value} ({human(value)}) is above the largest value allowed, "
                                    f"{maximum} ({human(maximum)}).")


def config_value_attrs(name: str) -> dict:
    """The widget attributes for an input of config `name`: its unit for the preview, if any."""
    unit = formatting.config_unit(name)
    if unit in (None, "count"):
        return {}
    unlimited = formatting.parse_config_value(name, "unlimited")
    return _unit_attrs("bytes" if unit.startswith("bytes") else unit, unlimited=unlimited)


def clean_config_value(name: str, text: str) -> str:
    """`text` typed for config `name`, as Kafka's raw value; a ValidationError sentence otherwise."""
    try:
        return formatting.parse_config_value(name, text)
    except formatting.UnitError as error:
        raise forms.ValidationError(f"{name}: {error}") from None
