"""Forms for registering clusters: they parse the input, services decide and validate."""
from __future__ import annotations

from django import forms

from console.clusters.models import SECRET_ENV_PREFIX, Cluster

CLUSTER_FIELDS = ("name", "bootstrap_servers", "security_protocol", "sasl_mechanism", "sasl_username",
                  "sasl_password_env", *Cluster.OAUTH_FIELDS, "admin_token_env", "ssl_cafile", "ssl_certfile",
                  "ssl_keyfile", "ssl_key_password_env")


class ClusterAddForm(forms.Form):
    name = forms.CharField(max_length=200)
    bootstrap_servers = forms.CharField(
        max_length=1000, help_text="host:port pairs separated by commas. List several brokers: the console "
                                   "bootstraps from any one that answers.")
    security_protocol = forms.ChoiceField(choices=Cluster.PROTOCOLS, initial="PLAINTEXT")
    sasl_mechanism = forms.ChoiceField(
        choices=Cluster.MECHANISMS, required=False, label="SASL mechanism",
        help_text="PLAIN and SCRAM log in with the username and password below; OAUTHBEARER with a token "
                  "from the OAuth client below.")
    sasl_username = forms.CharField(max_length=200, required=False, label="SASL username")
    sasl_password_env = forms.CharField(
        max_length=200, required=False, label="SASL password environment variable",
        help_text=f"The password never enters the database: name the environment variable of the console's "
                  f"processes that holds it. Only names starting with {SECRET_ENV_PREFIX} are allowed.")
    oauth_token_endpoint_url = forms.CharField(
        max_length=500, required=False, label="Token endpoint URL",
        help_text="The identity provider's OAuth 2 token endpoint (Kafka's sasl.oauthbearer.token.endpoint.url), "
                  "an https:// or http:// URL, e.g. https://keycloak.example.com/realms/kafka/protocol/"
                  "openid-connect/token. The console asks it for tokens with the client credentials grant.")
    oauth_client_id = forms.CharField(max_length=200, required=False, label="OAuth client id",
                                      help_text="The console's client at the identity provider (clientId).")
    oauth_client_secret_env = forms.CharField(
        max_length=200, required=False, label="OAuth client secret environment variable",
        help_text=f"The client secret never enters the database: name the environment variable of the console's "
                  f"processes that holds it, a name starting with {SECRET_ENV_PREFIX}.")
    oauth_scope = forms.CharField(
        max_length=500, required=False, label="OAuth scope",
        help_text="The scope to ask tokens for (scope), space-separated; empty: the identity provider's default.")
    admin_token_env = forms.CharField(
        max_length=200, required=False, label="Engine admin token environment variable",
        help_text=f"The variable holding the engine's admin port token (a name starting with "
                  f"{SECRET_ENV_PREFIX}). The bundled engine's token is read from ENGINE_ADMIN_TOKEN or its "
                  "token file.")
    ssl_cafile = forms.CharField(
        max_length=500, required=False, label="CA file",
        help_text="The CA certificates to trust (Kafka's ssl.truststore.location): the full path, on the console's "
                  "hosts, of a PEM file or a PKCS12 trust store. Empty: the system's trust store.")
    ssl_certfile = forms.CharField(
        max_length=500, required=False, label="Client certificate file",
        help_text="For clusters that ask a client certificate (ssl.client.auth=required; Kafka's "
                  "ssl.keystore.location): the full path of a PEM certificate, or of a PKCS12 key store holding "
                  "the key and its chain. A JKS store is converted to PKCS12 with keytool first.")
    ssl_keyfile = forms.CharField(
        max_length=500, required=False, label="Client key file",
        help_text="A PEM certificate's private key, a PEM file (it may be the certificate's own file). Empty for a "
                  "PKCS12 key store, which holds its key.")
    ssl_key_password_env = forms.CharField(
        max_length=200, required=False, label="Key password environment variable",
        help_text=f"The variable holding the password of an encrypted PEM key or of the PKCS12 stores "
                  f"(ssl.key.password, ssl.keystore.password, ssl.truststore.password), a name starting with "
                  f"{SECRET_ENV_PREFIX}.")


    # The form's groups, each saying when it applies: every field is in one.
    FIELDSETS = (("The cluster", ("name", "bootstrap_servers", "security_protocol")),
                 ("SASL login (SASL_PLAINTEXT, SASL_SSL)", ("sasl_mechanism", "sasl_username", "sasl_password_env")),
                 ("OAuth 2 client credentials (SASL mechanism OAUTHBEARER)", Cluster.OAUTH_FIELDS),
                 ("TLS (SSL, SASL_SSL): PEM files or PKCS12 stores",
                  ("ssl_cafile", "ssl_certfile", "ssl_keyfile", "ssl_key_password_env")),
                 ("Our engine only", ("admin_token_env",)))

    def fieldsets(self) -> list[tuple[str, list]]:
        return [(legend, [self[name] for name in names]) for legend, names in self.FIELDSETS]


class ClusterEditForm(ClusterAddForm):
    """The same fields, filled with the row's values."""


class ClusterRemoveForm(forms.Form):
    confirmation = forms.CharField(max_length=200, label="Type the cluster's name to confirm")
