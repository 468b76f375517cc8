"""Forms for alert rules, receivers and silences: every field checked on the server."""
from __future__ import annotations

import re2
from django import forms
from django.utils import timezone

from console.alerts.delivery import placeholders
from console.alerts.evaluation import BURROW_CHOICES, GROUP_KINDS, TOPIC_KINDS
from console.alerts.models import AlertRule, Receiver
from console.clusters.models import SECRET_ENV_PREFIX

MAX_REGEX_BYTES = 1000


class RuleForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=AlertRule.KINDS)
    target_type = forms.ChoiceField(choices=AlertRule.TARGETS, initial=AlertRule.ALL,
                                    help_text="Which groups (group rules) or topics (partition and "
                                              "transaction rules) the rule looks at.")
    target = forms.CharField(max_length=MAX_REGEX_BYTES, required=False)
    threshold = forms.FloatField(required=False, min_value=0, max_value=1e15,
                                 help_text="Records (lag), seconds (time lag, catch-up, transactions), "
                                           "partitions (under-replicated, offline, uncleanable: fires above it), a share "
                                           "0-1 (log dir usage).")
    statuses = forms.MultipleChoiceField(choices=[(s, s) for s in BURROW_CHOICES], required=False,
                                         widget=forms.CheckboxSelectMultiple)
    for_seconds = forms.IntegerField(min_value=0, max_value=7 * 86400, initial=0, label="For (seconds)",
                                     help_text="How long the condition must hold before the alert fires, like the "
                                               "for: clause of a Prometheus alerting rule; 0 fires at once.")
    enabled = forms.BooleanField(required=False, initial=True)
    receivers = forms.ModelMultipleChoiceField(queryset=Receiver.objects.all(), required=False,
                                               widget=forms.CheckboxSelectMultiple,
                                               help_text="Who is told when an alert fires and when it resolves "
                                                         "(receivers are added on the Alerts page).")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if not name or any(ord(c) < 32 for c in name):
            raise forms.ValidationError("Give the rule a name without control characters.")
        return name

    def clean(self):
        data = super().clean()
        kind, target_type, target = data.get("kind"), data.get("target_type"), (data.get("target") or "").strip()
        if target_type != AlertRule.ALL and kind not in GROUP_KINDS + TOPIC_KINDS:
            self.add_error("target_type", "This kind of rule looks at the whole cluster: choose all.")
        if target_type in (AlertRule.EXACT, AlertRule.PREFIX, AlertRule.REGEX) and not target:
            self.add_error("target", "Give the name, prefix or regex the rule looks at.")
        if target_type == AlertRule.REGEX and target:
            try:
                re2.compile(target)
            except re2.error as exc:
                self.add_error("target", f"This is not a regular expression RE2 accepts: {exc}")
        data["target"] = target if target_type != AlertRule.ALL else ""
        threshold = data.get("threshold")
        if kind == AlertRule.LOG_DIR_USAGE and threshold is not None and not 0 < threshold < 1:
            self.add_error("threshold", "A log dir's share of its disk is between 0 and 1 (0.85 for 85 %).")
        if kind == AlertRule.GROUP_STATUS and not data.get("statuses"):
            self.add_error("statuses", "Choose the statuses that fire.")
        if kind in (AlertRule.GROUP_LAG, AlertRule.GROUP_TIME_LAG, AlertRule.CATCH_UP, AlertRule.LOG_DIR_USAGE,
                    AlertRule.HANGING_TRANSACTION) and threshold is None:
            self.add_error("threshold", "This kind of rule needs a threshold.")
        data["threshold"] = threshold or 0.0
        data["statuses"] = ",".join(data.get("statuses") or ()) if kind == AlertRule.GROUP_STATUS else ""
        return data

    def rule_fields(self) -> dict:
        return {k: self.cleaned_data[k] for k in ("name", "kind", "target_type", "target", "threshold", "statuses",
                                                   "for_seconds", "enabled")}


class ReceiverForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=Receiver.KINDS)
    url = forms.CharField(max_length=2000, required=False,
                          help_text=f"Webhooks: put secret parts as {{{SECRET_ENV_PREFIX}NAME}}, filled from the "
                                    "workers' environment, e.g. https://hooks.slack.com/services/"
                                    f"{{{SECRET_ENV_PREFIX}SLACK_PATH}}.")
    emails = forms.CharField(max_length=2000, required=False, label="E-mail addresses")

    def clean(self):
        data = super().clean()
        kind, url, emails = data.get("kind"), (data.get("url") or "").strip(), (data.get("emails") or "").strip()
        if kind == Receiver.EMAIL:
            addresses = [a.strip() for a in emails.split(",") if a.strip()]
            if not addresses:
                self.add_error("emails", "Give at least one address.")
            for address in addresses:
                try:
                    forms.EmailField().clean(address)
                except forms.ValidationError:
                    self.add_error("emails", f"{address!r} is not an e-mail address.")
            data["url"], data["emails"] = "", ", ".join(addresses)
        elif kind:
            if not url.startswith(("http://", "https://")):
                self.add_error("url", "A webhook URL starts with https:// (or http://).")
            stripped = url
            for name in placeholders(url):
                stripped = stripped.replace("{" + name + "}", "")
            if "{" in stripped or "}" in stripped:
                self.add_error("url", f"Braces may only hold a variable named {SECRET_ENV_PREFIX}<NAME>.")
            data["url"], data["emails"] = url, ""
        return data


class SilenceForm(forms.Form):
    rule = forms.IntegerField(min_value=1)
    subject = forms.CharField(max_length=1000, required=False, help_text="Empty: every subject of the rule.")
    hours = forms.FloatField(min_value=0.05, max_value=24 * 90, initial=2, help_text="How long, in hours.")
    reason = forms.CharField(max_length=500, required=False)

    def until(self):
        return timezone.now() + timezone.timedelta(hours=self.cleaned_data["hours"])
