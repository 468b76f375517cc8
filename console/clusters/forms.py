"""Forms for registering clusters: they parse the input, services decide and validate."""
from __future__ import annotations

from django import forms

from console.clusters.models import SECRET_ENV_PREFIX, Cluster

CLUSTER_FIELDS = ("name", "bootstrap_servers", "security_protocol", "sasl_mechanism", "sasl_username",
                  "sasl_password_env", "admin_token_env")


class ClusterAddForm(forms.Form):
    name = forms.CharField(max_length=200)
    bootstrap_servers = forms.CharField(
        max_length=1000, help_text="host:port pairs separated by commas. List several brokers: the console "
                                   "bootstraps from any one that answers.")
    security_protocol = forms.ChoiceField(choices=Cluster.PROTOCOLS, initial="PLAINTEXT")
    sasl_mechanism = forms.ChoiceField(choices=Cluster.MECHANISMS, required=False)
    sasl_username = forms.CharField(max_length=200, required=False)
    sasl_password_env = forms.CharField(
        max_length=200, required=False, label="SASL password environment variable",
        help_text=f"The password never enters the database: name the environment variable of the console's "
                  f"processes that holds it. Only names starting with {SECRET_ENV_PREFIX} are allowed.")
    admin_token_env = forms.CharField(
        max_length=200, required=False, label="Engine admin token environment variable",
        help_text=f"Our engine only: the variable holding its admin port token (a name starting with "
                  f"{SECRET_ENV_PREFIX}). The bundled engine's token is read from ENGINE_ADMIN_TOKEN or its "
                  "token file.")


class ClusterEditForm(ClusterAddForm):
    """The same fields, filled with the row's values."""


class ClusterRemoveForm(forms.Form):
    confirmation = forms.CharField(max_length=200, label="Type the cluster's name to confirm")
