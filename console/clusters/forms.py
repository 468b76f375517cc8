"""Forms for registering clusters: they parse the input, services decide and validate."""
from __future__ import annotations

from django import forms

from console.clusters.models import Cluster


class ClusterAddForm(forms.Form):
    name = forms.CharField(max_length=200)
    bootstrap_servers = forms.CharField(max_length=1000, help_text="host:port pairs separated by commas.")
    security_protocol = forms.ChoiceField(choices=Cluster.PROTOCOLS, initial="PLAINTEXT")
    sasl_mechanism = forms.ChoiceField(choices=Cluster.MECHANISMS, required=False)
    sasl_username = forms.CharField(max_length=200, required=False)
    sasl_password_env = forms.CharField(
        max_length=200, required=False, label="SASL password environment variable",
        help_text="The password never enters the database: name the environment variable of the "
                  "console's processes that holds it.")


class ClusterRemoveForm(forms.Form):
    confirmation = forms.CharField(max_length=200, label="Type the cluster's name to confirm")
