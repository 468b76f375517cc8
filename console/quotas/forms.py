"""Forms for the quota actions: they parse and bound the input and apply Kafka's rules
(console.quotas.rules) so a bad field is a form error, never a request; the cluster decides
the rest."""
from __future__ import annotations

from django import forms

from console.errors import InvalidInput
from console.kafka_gateway.quotas import Entity
from console.quotas.rules import (CLIENT_ID, ENTITY_LABELS, IP, KEYS, MAX_NAME, USER, entity_check, key_check,
                                  parse_value, value_check)

# (entity type, name field, default field)
ENTITY_FIELDS = ((USER, "user", "user_default"), (CLIENT_ID, "client_id", "client_id_default"),
                 (IP, "ip", "ip_default"))


def _name_field(entity_type: str) -> forms.CharField:
    return forms.CharField(required=False, max_length=MAX_NAME, strip=False,
                           label=ENTITY_LABELS[entity_type][0].upper() + ENTITY_LABELS[entity_type][1:],
                           error_messages={"max_length": f"A {ENTITY_LABELS[entity_type]} name is at most "
                                                         f"{MAX_NAME} characters."})


def _default_field(entity_type: str) -> forms.BooleanField:
    return forms.BooleanField(required=False, label=f"or the default {ENTITY_LABELS[entity_type]}")


class QuotaEntityForm(forms.Form):
    """Which entity: a name or the default for each of its types (a user, a client id, both,
    or an IP address). `entity` holds it once the form is valid."""

    user = _name_field(USER)
    user_default = _default_field(USER)
    client_id = _name_field(CLIENT_ID)
    client_id_default = _default_field(CLIENT_ID)
    ip = _name_field(IP)
    ip_default = _default_field(IP)

    def clean(self):
        data = super().clean()
        pairs = []
        for entity_type, name_field, default_field in ENTITY_FIELDS:
            name, default = data.get(name_field) or "", data.get(default_field)
            if name and default:
                self.add_error(name_field, f"Give a {ENTITY_LABELS[entity_type]} name or choose the default, "
                                           "not both.")
            elif name or default:
                pairs.append((entity_type, None if default else name))
        if not self.errors:
            try:
                self.entity: Entity = entity_check(tuple(pairs))
            except InvalidInput as exc:
                raise forms.ValidationError(str(exc)) from None
        return data

    @classmethod
    def initial_for(cls, entity: Entity) -> dict:
        """The form's fields naming `entity` (the list page's links and hidden fields)."""
        shown = {}
        for entity_type, name in entity:
            _, name_field, default_field = next(f for f in ENTITY_FIELDS if f[0] == entity_type)
            shown[default_field if name is None else name_field] = "on" if name is None else name
        return shown


class QuotaSetForm(QuotaEntityForm):
    key = forms.ChoiceField(choices=[(k, f"{k} ({q.unit})") for k, q in KEYS.items()],
                            initial="controller_mutation_rate",
                            help_text="Byte rates, request_percentage and connection_creation_rate apply per broker; "
                                      "connection_creation_rate is for IP addresses only.")
    value = forms.CharField(max_length=100, help_text="Greater than 0; a whole number for the byte rates and "
                                                      "connections. Byte rates take sizes too: 10MiB, 512KB.")

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            key_check(self.entity, data["key"])
        except InvalidInput as exc:
            self.add_error("key", str(exc))
            return data
        try:
            data["value"] = value_check(data["key"], parse_value(data["key"], data["value"]))
        except InvalidInput as exc:
            self.add_error("value", str(exc))
        return data


class QuotaRemoveForm(QuotaEntityForm):
    key = forms.ChoiceField(choices=[(k, k) for k in KEYS])

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                key_check(self.entity, data["key"])
            except InvalidInput as exc:
                self.add_error("key", str(exc))
        return data


class QuotaWhoForm(forms.Form):
    """A client to find the quotas of: its principal name and client id (either may be empty;
    an empty user is ANONYMOUS, the name of a client that did not log in)."""

    who_user = forms.CharField(required=False, max_length=MAX_NAME, strip=False, label="User",
                               error_messages={"max_length": f"A user name is at most {MAX_NAME} characters."})
    who_client_id = forms.CharField(required=False, max_length=MAX_NAME, strip=False, label="Client id",
                                    error_messages={"max_length": f"A client id is at most {MAX_NAME} characters."})

    def clean(self):
        data = super().clean()
        for field in ("who_user", "who_client_id"):
            if any(ch < " " or ch == "\x7f" for ch in data.get(field) or ""):
                self.add_error(field, "A name cannot hold control characters such as a line break.")
        return data


def list_filters(request) -> dict:
    """The list page's filters from the query string, as the selector takes them (the page and the API)."""
    return {"entity_type": request.GET.get("type", ""), "search": request.GET.get("q", "")}
