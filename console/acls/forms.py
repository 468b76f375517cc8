"""Forms of the ACLs and Users pages. Each bounds and checks its input with Kafka's rules
(console.acls.rules) so a bad field is a form error, never a request; the cluster decides the rest."""
from __future__ import annotations

from django import forms

from console.acls import rules
from console.errors import InvalidInput
from kafka_rules.acls import ALLOW, ANY, LITERAL, PREFIXED, TOPIC, AclBinding, parse_principal
from engine.security.scram import MAX_ITERATIONS, MIN_ITERATIONS

SORTS = ("principal", "resource_type", "resource_name", "pattern_type", "operation", "permission_type", "host")
PATTERNS = [(LITERAL, "LITERAL (the name itself, or * for all)"), (PREFIXED, "PREFIXED (names starting with it)")]
MAX_CSV_BYTES = 2 * 1024 * 1024


def _code_choices(choices, *, blank: str | None = None):
    return ([("", blank)] if blank is not None else []) + [(str(code), name) for code, name in choices]


class AclFilterForm(forms.Form):
    """The list's filters (substring matches, any case) and its order."""

    principal = forms.CharField(required=False, max_length=rules.MAX_NAME)
    resource_type = forms.TypedChoiceField(required=False, coerce=int, empty_value=ANY,
                                           choices=_code_choices(rules.RESOURCE_CHOICES, blank="any resource"))
    name = forms.CharField(required=False, max_length=rules.MAX_NAME)
    pattern_type = forms.TypedChoiceField(required=False, coerce=int, empty_value=ANY,
                                          choices=_code_choices(rules.PATTERN_CHOICES, blank="any pattern"))
    operation = forms.TypedChoiceField(required=False, coerce=int, empty_value=ANY,
                                       choices=_code_choices(rules.OPERATION_CHOICES, blank="any operation"))
    permission_type = forms.TypedChoiceField(required=False, coerce=int, empty_value=ANY,
                                             choices=_code_choices(rules.PERMISSION_CHOICES, blank="allow or deny"))
    sort = forms.ChoiceField(required=False, choices=[(s, s) for s in SORTS])
    desc = forms.BooleanField(required=False)
    page = forms.IntegerField(required=False, min_value=1, max_value=1_000_000)

    def filters(self) -> dict:
        data = self.cleaned_data if self.is_valid() else {}
        return {"principal": data.get("principal", ""), "resource_type": data.get("resource_type", ANY),
                "name": data.get("name", ""), "pattern_type": data.get("pattern_type", ANY),
                "operation": data.get("operation", ANY), "permission_type": data.get("permission_type", ANY)}


def _principal_check(value: str) -> str:
    try:
        kind, name = parse_principal(value.strip())
    except ValueError:
        raise forms.ValidationError("A principal is Type:name, for example User:alice (User:* for everyone).") \
            from None
    if not kind or not name:
        raise forms.ValidationError("A principal is Type:name, for example User:alice (User:* for everyone).")
    return value.strip()


class AclBindingForm(forms.Form):
    """One binding, as kafka-acls.sh takes it."""

    principal = forms.CharField(max_length=rules.MAX_NAME, validators=[_principal_check],
                                help_text="Type:name, e.g. User:alice; User:* for every principal")
    host = forms.CharField(max_length=rules.MAX_NAME, initial="*", help_text="An IP address, or * for any host")
    resource_type = forms.TypedChoiceField(coerce=int, initial=TOPIC, choices=_code_choices(rules.RESOURCE_CHOICES))
    resource_name = forms.CharField(max_length=rules.MAX_NAME, help_text="* (LITERAL) matches every resource "
                                                                         "of the type; the cluster is kafka-cluster")
    pattern_type = forms.TypedChoiceField(coerce=int, initial=LITERAL, choices=_code_choices(PATTERNS))
    operation = forms.TypedChoiceField(coerce=int, choices=_code_choices(rules.OPERATION_CHOICES))
    permission_type = forms.TypedChoiceField(coerce=int, initial=ALLOW,
                                             choices=_code_choices(rules.PERMISSION_CHOICES))

    def clean(self):
        data = super().clean()
        if not self.errors:
            try:
                self.bindings = [rules.binding_check(AclBinding(
                    data["resource_type"], data["resource_name"], data["pattern_type"], data["principal"],
                    data["host"].strip(), data["operation"], data["permission_type"]))]
            except InvalidInput as exc:
                raise forms.ValidationError(str(exc)) from None
        return data


KINDS = [("consumer", "a consumer"), ("producer", "a producer"), ("streams", "a Kafka Streams application")]


class WizardForm(forms.Form):
    """The ACLs one kind of client needs (console.acls.rules: consumer_, producer_, streams_bindings)."""

    kind = forms.ChoiceField(choices=KINDS, widget=forms.RadioSelect, initial="consumer")
    principal = forms.CharField(max_length=rules.MAX_NAME, validators=[_principal_check],
                                help_text="Type:name, e.g. User:orders-app")
    host = forms.CharField(max_length=rules.MAX_NAME, initial="*")
    topic = forms.CharField(required=False, max_length=rules.MAX_NAME, help_text="consumer and producer")
    topic_pattern = forms.TypedChoiceField(coerce=int, initial=LITERAL, required=False, empty_value=LITERAL,
                                  choices=_code_choices(PATTERNS))
    group = forms.CharField(required=False, max_length=rules.MAX_NAME, help_text="consumer: its group.id")
    group_pattern = forms.TypedChoiceField(coerce=int, initial=LITERAL, required=False, empty_value=LITERAL,
                                  choices=_code_choices(PATTERNS))
    transactional_id = forms.CharField(required=False, max_length=rules.MAX_NAME,
                                       help_text="producer: its transactional.id, if it has one")
    transactional_pattern = forms.TypedChoiceField(coerce=int, initial=LITERAL, required=False, empty_value=LITERAL,
                                  choices=_code_choices(PATTERNS))
    idempotent = forms.BooleanField(required=False, label="Idempotent producer (IDEMPOTENT_WRITE on the cluster)")
    application_id = forms.CharField(required=False, max_length=rules.MAX_NAME,
                                     help_text="Kafka Streams: its application.id (its group and topic prefix)")
    input_topics = forms.CharField(required=False, max_length=20_000, help_text="Kafka Streams: comma-separated")
    output_topics = forms.CharField(required=False, max_length=20_000, help_text="Kafka Streams: comma-separated")
    exactly_once = forms.BooleanField(required=False, label="Exactly-once processing (processing.guarantee)")

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        kind, who = data["kind"], {"principal": data["principal"], "host": data["host"].strip()}
        if kind == "consumer":
            self._need(data, "topic", "group")
            bindings = rules.consumer_bindings(topic=data["topic"], topic_pattern=data["topic_pattern"],
                                               group=data["group"], group_pattern=data["group_pattern"], **who)
        elif kind == "producer":
            self._need(data, "topic")
            bindings = rules.producer_bindings(topic=data["topic"], topic_pattern=data["topic_pattern"],
                                               transactional_id=data["transactional_id"],
                                               transactional_pattern=data["transactional_pattern"],
                                               idempotent=data["idempotent"], **who)
        else:
            self._need(data, "application_id")
            bindings = rules.streams_bindings(application_id=data["application_id"],
                                              input_topics=_names(data["input_topics"]),
                                              output_topics=_names(data["output_topics"]),
                                              exactly_once=data["exactly_once"], **who)
        if not self.errors:
            try:
                self.bindings = [rules.binding_check(b) for b in bindings]
            except InvalidInput as exc:
                raise forms.ValidationError(str(exc)) from None
        return data

    def _need(self, data: dict, *names: str) -> None:
        for name in names:
            if not data.get(name):
                self.add_error(name, f"{self.fields[name].label or name} is needed for {dict(KINDS)[data['kind']]}.")


def _names(text: str) -> list[str]:
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


class CsvForm(forms.Form):
    """ACLs as CSV (console.acls.rules.CSV_HEADER's columns): an uploaded file or pasted text."""

    csv_file = forms.FileField(required=False, label="CSV file")
    acls_csv = forms.CharField(required=False, max_length=MAX_CSV_BYTES, widget=forms.Textarea(attrs={"rows": 8}),
                               label="or paste the rows")

    def clean(self):
        data = super().clean()
        upload = data.get("csv_file")
        if upload is not None:
            if upload.size > MAX_CSV_BYTES:
                raise forms.ValidationError(f"The file is larger than {MAX_CSV_BYTES // 1024 // 1024} MiB.")
            try:
                data["acls_csv"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
        if not data.get("acls_csv", "").strip():
            raise forms.ValidationError("Choose a CSV file or paste its rows.")
        self.parsed = rules.parse_csv(data["acls_csv"])
        if not self.parsed.bindings and not self.parsed.errors:
            raise forms.ValidationError("The CSV holds no ACL.")
        return data


class PrincipalForm(forms.Form):
    principal = forms.CharField(max_length=rules.MAX_NAME, validators=[_principal_check], initial="User:")
    host = forms.CharField(max_length=rules.MAX_NAME, initial="*", required=False,
                           help_text="The client's IP address; * counts only ACLs for any host")


MECHANISMS = [("SCRAM-SHA-256", "SCRAM-SHA-256"), ("SCRAM-SHA-512", "SCRAM-SHA-512")]


class ScramUserForm(forms.Form):
    """A user's SCRAM credential: added, or its password rotated. The password field is never
    rendered back (render_value=False) and never leaves the request except salted."""

    user = forms.CharField(max_length=rules.MAX_NAME, strip=False)
    mechanisms = forms.MultipleChoiceField(choices=MECHANISMS, initial=["SCRAM-SHA-256", "SCRAM-SHA-512"],
                                           widget=forms.CheckboxSelectMultiple)
    password = forms.CharField(min_length=8, max_length=1000, strip=False,
                               widget=forms.PasswordInput(render_value=False),
                               help_text="At least 8 characters; stored salted and hashed by the cluster")
    iterations = forms.IntegerField(min_value=MIN_ITERATIONS, max_value=MAX_ITERATIONS, initial=8192,
                                    help_text=f"PBKDF2 iterations, {MIN_ITERATIONS}-{MAX_ITERATIONS}")

    def clean_user(self):
        user = self.cleaned_data["user"]
        if not user.strip() or user != user.strip() or any(c in user for c in ",=") or not user.isprintable():
            raise forms.ValidationError("A user name has no leading or trailing spaces, commas, '=' or control "
                                        "characters.")
        return user


class ScramRemoveForm(forms.Form):
    """One field for the mechanisms (a confirmation page re-posts single values)."""

    user = forms.CharField(max_length=rules.MAX_NAME, strip=False)
    mechanism = forms.ChoiceField(choices=[("both", "both")] + MECHANISMS)

    def clean(self):
        data = super().clean()
        if "mechanism" in data:
            data["mechanisms"] = [m for m, _ in MECHANISMS] if data["mechanism"] == "both" else [data["mechanism"]]
        return data


