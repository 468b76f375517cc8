"""Forms for the broker pages: one dynamic broker config's new value (kafka-configs.sh
--entity-type brokers --alter), for this broker or for every broker (the cluster-wide default)."""
from __future__ import annotations

from django import forms

from console.topics.forms import TopicConfigValueForm

THIS_BROKER, CLUSTER_DEFAULT = "broker", "cluster"


class BrokerConfigValueForm(TopicConfigValueForm):
    """As the topic form (a value in a person's units, the diff's marker), with a scope. The
    marker carries the scope too: a change previewed for one broker is not saved for all."""

    scope = forms.ChoiceField(choices=[(THIS_BROKER, "This broker only"),
                                       (CLUSTER_DEFAULT, "Every broker (the cluster-wide default)")],
                              initial=THIS_BROKER, widget=forms.RadioSelect, label="Set for")
    field_order = ["value", "reset", "scope", "previewed"]

    def __init__(self, *args, config: str, sensitive: bool = False, can_reset: bool = True, **kwargs):
        super().__init__(*args, config=config, can_reset=can_reset, **kwargs)
        if can_reset:
            self.fields["reset"].label = "Remove the override (back to the cluster default, the static file or Kafka's)"
        if sensitive:      # a password: typed unseen, and never written back into a page
            self.fields["value"].widget = forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"})
            self.fields["value"].help_text = "Kafka keeps it as a password: it is not shown, before or after."

    @property
    def change_marker(self) -> str:
        return f"{self.cleaned_data.get('scope') or THIS_BROKER}:{super().change_marker}"
