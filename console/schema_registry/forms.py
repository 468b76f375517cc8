"""Forms of the Schemas pages; every field is checked on the server."""
from __future__ import annotations

import json

from django import forms
from django.utils.html import escape

from console.clusters.models import validate_secret_env_name
from console.schema_registry.models import RegistrySettings
from console.schema_registry.selectors import LEVELS, MODES, TYPES

MAX_SUBJECT = 1024
MAX_SCHEMA_CHARS = 1 << 20


def clean_subject(value: str) -> str:
    if not value or len(value) > MAX_SUBJECT or any(ord(c) < 0x20 or ord(c) == 0x7f for c in value):
        raise forms.ValidationError(f"A subject is 1 to {MAX_SUBJECT} characters, without control characters.")
    return value


class RegistrySettingsForm(forms.Form):
    url = forms.URLField(required=False, max_length=500, assume_scheme="https",
                         help_text="The registry's base URL (e.g. http://registry:8081); empty: this cluster has none.")
    auth = forms.ChoiceField(choices=RegistrySettings.AUTH_KINDS, initial=RegistrySettings.NONE)
    username = forms.CharField(required=False, max_length=200, help_text="HTTP basic only.")
    secret_env = forms.CharField(required=False, max_length=200, validators=[validate_secret_env_name],
                                 label="Secret's environment variable",
                                 # escaped (and so safe): form.as_p renders help text as HTML
                                 help_text=escape("CONSOLE_SECRET_<NAME>: the variable holding the password or the "
                                                  "token."))

    def clean(self):
        data = super().clean()
        auth = data.get("auth")
        if auth in (RegistrySettings.BASIC, RegistrySettings.BEARER) and not data.get("secret_env"):
            raise forms.ValidationError("Name the CONSOLE_SECRET_* variable that holds the password or token.")
        if auth == RegistrySettings.BASIC and not data.get("username"):
            raise forms.ValidationError("HTTP basic needs a user name.")
        return data


class RegisterForm(forms.Form):
    subject = forms.CharField(max_length=MAX_SUBJECT, validators=[clean_subject])
    schema_type = forms.ChoiceField(choices=[(t, t) for t in TYPES], initial="AVRO", label="Schema type")
    schema = forms.CharField(max_length=MAX_SCHEMA_CHARS, strip=False,
                             widget=forms.Textarea(attrs={"rows": 16, "spellcheck": "false"}))
    references = forms.CharField(required=False, max_length=100_000, widget=forms.Textarea(attrs={"rows": 3}),
                                 help_text='JSON list, e.g. [{"name": "shop.Address", "subject": "address", '
                                           '"version": 1}]; empty: none.')

    def clean_references(self) -> list[dict]:
        text = self.cleaned_data["references"].strip()
        if not text:
            return []
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise forms.ValidationError(f"Not JSON: {exc}.") from None
        if not isinstance(value, list) or not all(
                isinstance(r, dict) and isinstance(r.get("name"), str) and isinstance(r.get("subject"), str)
                and isinstance(r.get("version"), int) and not isinstance(r.get("version"), bool) for r in value):
            raise forms.ValidationError("Each reference is an object with a name, a subject and a version number.")
        return [{"name": r["name"], "subject": r["subject"], "version": r["version"]} for r in value]


class LevelForm(forms.Form):
    subject = forms.CharField(required=False, max_length=MAX_SUBJECT, validators=[clean_subject])
    level = forms.ChoiceField(choices=[(level, level) for level in LEVELS])


class ModeForm(forms.Form):
    subject = forms.CharField(required=False, max_length=MAX_SUBJECT, validators=[clean_subject])
    mode = forms.ChoiceField(choices=[(m, m) for m in MODES])


class DeleteForm(forms.Form):
    subject = forms.CharField(max_length=MAX_SUBJECT, validators=[clean_subject])
    version = forms.IntegerField(required=False, min_value=1, max_value=2 ** 31 - 1)
    permanent = forms.BooleanField(required=False)
