"""Forms of the Connect section: they parse and bound the input; Connect validates configs."""
from __future__ import annotations

import json

from django import forms

from console.clusters.models import SECRET_ENV_PREFIX
from console.connect.masking import HIDDEN

MAX_JSON = 200_000
MAX_VALUE = 20_000


class ConnectClusterForm(forms.Form):
    name = forms.CharField(max_length=200)
    url = forms.CharField(max_length=500, label="REST address",
                          help_text="Any worker's REST address, e.g. http://connect-1:8083. Requests a worker cannot "
                                    "answer itself it forwards to its leader.")
    username = forms.CharField(max_length=200, required=False, help_text="For HTTP basic authentication, if set.")
    password_env = forms.CharField(
        max_length=200, required=False, label="Password environment variable",
        help_text=f"The password never enters the database: name the environment variable of the console's "
                  f"processes that holds it. Only names starting with {SECRET_ENV_PREFIX} are allowed.")


class ConnectorJsonForm(forms.Form):
    """`{"name": ..., "config": {...}}` as POST /connectors takes it, or a flat config with `name`."""

    document = forms.CharField(widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false"}), max_length=MAX_JSON,
                               label="Connector as JSON",
                               help_text='{"name": "my-connector", "config": {"connector.class": "...", ...}}')

    def clean_document(self):
        text = self.cleaned_data["document"]
        data = _json_object(text, shape="Give a JSON object.")
        config = data.get("config") if isinstance(data.get("config"), dict) else data
        name = data.get("name") if "config" in data else config.get("name")
        if not isinstance(name, str) or not name.strip():
            raise forms.ValidationError('Give the connector a "name".')
        self.connector_name = name.strip()
        self.config = _flat(config)
        hidden = [key for key, value in self.config.items() if value == HIDDEN]
        if hidden:
            raise forms.ValidationError(f"Type the values of {', '.join(hidden)}: {HIDDEN} stands for a secret "
                                        f"the page does not show back, and a new connector has none to keep.")
        return text


class ConnectorConfigForm(forms.Form):
    """A connector's whole config as a flat JSON object, as PUT /connectors/{c}/config takes it."""

    document = forms.CharField(widget=forms.Textarea(attrs={"rows": 20, "spellcheck": "false"}), max_length=MAX_JSON,
                               label="Configuration as JSON",
                               help_text="Every key of the connector's config: a key left out goes back to its "
                                         "default. Secrets reading [hidden] keep their current value.")

    def clean_document(self):
        text = self.cleaned_data["document"]
        data = _json_object(text, shape='Give a JSON object of keys and values: {"connector.class": "...", ...}.')
        self.config = _flat(data)
        return text


def _json_object(text: str, *, shape: str) -> dict:
    """The JSON object in `text`; a readable refusal when it is not JSON, or `shape` when it is
    JSON but not an object."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise forms.ValidationError(f"This is not JSON: {exc}.") from None
    if not isinstance(data, dict):
        raise forms.ValidationError(shape)
    return data


def _flat(config: dict) -> dict[str, str]:
    """Connect's config values are strings: numbers and booleans as Connect would print them."""
    flat = {}
    for key, value in config.items():
        if isinstance(value, (dict, list)):
            raise forms.ValidationError(f"The value of {key} must be a string, number or boolean.")
        flat[str(key)] = "" if value is None else (str(value).lower() if isinstance(value, bool) else str(value))
    if not flat.get("connector.class"):
        raise forms.ValidationError('The config names no "connector.class".')
    return flat


def connector_form(fields: list, data=None, initial: dict[str, str] | None = None) -> forms.Form:
    """A form with one field per config key of the plugin (Connect's definition): text inputs
    (password inputs for PASSWORD keys, never filled back in), choices when Connect recommends
    values, every field optional here (Connect's validation says what is missing). `initial`:
    an existing connector's values."""
    form = forms.Form(data, initial=initial)
    for group, definitions in fields:
        for d in definitions:
            attrs = {"data-group": group, "placeholder": d.default or ""}
            if d.secret:
                field = forms.CharField(required=False, max_length=MAX_VALUE, strip=False,
                                        widget=forms.PasswordInput(attrs=attrs, render_value=False))
            elif d.type == "BOOLEAN":
                field = forms.ChoiceField(required=False, choices=[("", f"default ({d.default})"), ("true", "true"),
                                                                   ("false", "false")])
            elif d.recommended:
                field = forms.ChoiceField(required=False, choices=[("", "default")] + [(r, r) for r in d.recommended])
            else:
                field = forms.CharField(required=False, max_length=MAX_VALUE, widget=forms.TextInput(attrs=attrs))
            field.label = d.display_name
            field.help_text = d.documentation
            field.definition = d
            form.fields[d.name] = field
    return form


def config_from_form(form: forms.Form, current: dict[str, str]) -> dict[str, str]:
    """An existing connector's whole new config from its plugin form (valid): the current config
    (secrets `[hidden]`, keys the plugin does not define kept), each filled field's value, a
    field emptied back to its default, and a secret left empty kept as it is (password inputs
    are never filled back in)."""
    config = dict(current)
    for key, value in form.cleaned_data.items():
        if value not in (None, ""):
            config[key] = value
        elif not form.fields[key].definition.secret:
            config.pop(key, None)
    return config
