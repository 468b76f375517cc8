"""Forms for reassignments: they parse and bound the input; services decide."""
from __future__ import annotations

from django import forms

from console.reassignments.plan_json import MAX_JSON_BYTES
from console.reassignments.services import SCENARIOS
from console.unit_fields import SizeField

SCENARIO_LABELS = {"rebalance": "Rebalance", "add": "Add brokers (fill the new ones)",
                   "decommission": "Decommission brokers (move everything off)",
                   "restrict": "Restrict topics to chosen brokers", "rf": "Change the replication factor"}


def _id_list(value: str, what: str) -> list:
    items = [s.strip() for s in value.replace("\n", ",").split(",") if s.strip()]
    if len(items) > 10_000:
        raise forms.ValidationError(f"Too many {what}.")
    return items


class BrokerIdsField(forms.Field):
    """Broker ids from a multi-select of the cluster's brokers (one value per ticked box), or
    from comma-separated text (scripts, a cluster whose brokers the console has not seen yet).
    Ids the cluster does not have are left to the planner, which names them."""

    def __init__(self, **kwargs):
        kwargs.setdefault("widget", forms.CheckboxSelectMultiple(attrs={"class": "broker-picker"}))
        super().__init__(**kwargs)

    def to_python(self, value) -> list[int]:
        values = value if isinstance(value, (list, tuple)) else [value or ""]
        items = [item for v in values for item in _id_list(str(v), "brokers")]
        try:
            return sorted({int(b) for b in items})
        except ValueError:
            raise forms.ValidationError("Broker ids are numbers, e.g. 1,2,3.") from None


class GenerateForm(forms.Form):
    name = forms.CharField(max_length=200)
    scenario = forms.ChoiceField(choices=[(s, SCENARIO_LABELS[s]) for s in SCENARIOS])
    topics = forms.CharField(required=False, max_length=200_000,
                             help_text="Comma-separated; empty means every topic of the cluster.")
    brokers = BrokerIdsField(required=False, help_text="The brokers to fill, to empty, or to restrict to.")
    replication_factor = forms.IntegerField(required=False, min_value=1, max_value=100)
    bytes_tolerance_percent = forms.IntegerField(initial=10, min_value=1, max_value=100,
                                                 help_text="Bytes per broker within this % of the mean.")

    def __init__(self, *args, brokers: list[tuple[int, str]] = (), **kwargs):
        """`brokers`: (id, label) of the cluster's brokers for the multi-select; none known: a text box."""
        super().__init__(*args, **kwargs)
        field = self.fields["brokers"]
        if brokers:
            field.widget.choices = [(str(b), label) for b, label in brokers]
        else:
            field.widget = forms.TextInput(attrs={"placeholder": "1,2,3"})
            field.help_text = "Broker ids, comma-separated: to fill, to empty, or to restrict to."

    def clean_topics(self) -> list[str]:
        return _id_list(self.cleaned_data["topics"], "topics")


class ImportForm(forms.Form):
    name = forms.CharField(max_length=200)
    document = forms.CharField(widget=forms.Textarea(attrs={"rows": 8, "cols": 70, "spellcheck": "false"}),
                               max_length=MAX_JSON_BYTES,
                               help_text="The JSON of kafka-reassign-partitions.sh (version 1).")


class EditMoveForm(forms.Form):
    topic = forms.CharField(max_length=249)
    partition = forms.IntegerField(min_value=0)
    replicas = forms.CharField(max_length=2000)


THROTTLE_HELP = "Bytes per second each broker may copy, such as 50MiB or 10MB. Empty: no throttle."


def throttle_field(**kwargs) -> SizeField:
    """A replication throttle per broker, per second, in a person's units ("50MiB")."""
    return SizeField(required=False, min_value=1024, max_value=10 * 1024 ** 3, label="Throttle per broker (per second)",
                     help_text=THROTTLE_HELP, **kwargs)


class RunForm(forms.Form):
    throttle = throttle_field(initial="50MiB")
    per_broker_limit = forms.IntegerField(initial=5, min_value=1, max_value=1000,
                                          label="Moves in or out per broker at a time")
    cluster_limit = forms.IntegerField(initial=50, min_value=1, max_value=100_000,
                                       label="Moves in the cluster at a time")
    elect_preferred = forms.BooleanField(required=False, initial=True,
                                         label="Preferred leader election after each batch")
    run_at = forms.DateTimeField(required=False, label="Run at (UTC, empty: now)",
                                 widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
                                 input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"])

    def throttle_bytes(self) -> int | None:
        return self.cleaned_data.get("throttle")


class ScheduleForm(forms.Form):
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=[("rebalance", "Rebalance"), ("elect", "Preferred leader election")])
    cron = forms.CharField(required=False, max_length=100, label="Cron window (UTC)",
                           help_text='"0 2 * * *" is nightly at 02:00. Or give one time below.')
    run_at = forms.DateTimeField(required=False, label="Or once at (UTC)",
                                 widget=forms.DateTimeInput(attrs={"type": "datetime-local"}),
                                 input_formats=["%Y-%m-%dT%H:%M", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M:%S"])
    topics = forms.CharField(required=False, max_length=200_000, help_text="Comma-separated; empty: all topics.")
    min_leader_skew_percent = forms.FloatField(required=False, min_value=0, max_value=10_000,
                                               label="Only if leader skew is over (%)")
    throttle = throttle_field()

    def clean_topics(self) -> list[str]:
        return _id_list(self.cleaned_data["topics"], "topics")


class ScheduleEditForm(forms.Form):
    cron = forms.CharField(required=False, max_length=100)
    enabled = forms.BooleanField(required=False)
    min_leader_skew_percent = forms.FloatField(required=False, min_value=0, max_value=10_000)
