"""Forms of the analytics pages, validated on the server."""
from django import forms

from console.unit_fields import DurationField, SizeField

# Kafka's type for both configs is a long; -1 means "no limit".
LONG_MAX = 2**63 - 1


class WhatIfForm(forms.Form):
    """retention.ms and retention.bytes as people type them ("3d", "1GiB"), or raw numbers."""

    retention_ms = DurationField(label="retention.ms", required=False, min_value=-1, max_value=LONG_MAX,
                                 help_text="A duration such as 3d or 12h, or milliseconds; -1 or empty: no time limit.")
    retention_bytes = SizeField(label="retention.bytes", required=False, min_value=-1, max_value=LONG_MAX,
                                help_text="A size per partition such as 1GiB or 500MB, or bytes; -1 or empty: "
                                          "no size limit.")

    def clean_retention_ms(self):
        value = self.cleaned_data["retention_ms"]
        if value == 0:
            raise forms.ValidationError("retention.ms must be at least 1 (or -1: no time limit).")
        return None if value == -1 else value

    def clean_retention_bytes(self):
        value = self.cleaned_data["retention_bytes"]
        return None if value == -1 else value

    def clean(self):
        cleaned = super().clean()
        if not self.errors and cleaned.get("retention_ms") is None and cleaned.get("retention_bytes") is None:
            raise forms.ValidationError("Give retention.ms or retention.bytes (or both): with neither limit, "
                                        "nothing is deleted.")
        return cleaned
