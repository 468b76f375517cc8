import os
import re
import urllib.parse
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import models

from console.errors import ConsoleError
from console.kafka_gateway import tls_stores
from console.kafka_gateway.records import OAUTHBEARER, ConnectionSettings

_HOST_PORT = re.compile(r"^[A-Za-z0-9._\-\[\]:]+:\d{1,5}$")
# Secrets are named by environment variable, and only variables with this prefix may be named:
# otherwise an admin could point a cluster at SECRET_KEY or DATABASE_URL and have the console
# send it to a broker of their choosing as a SASL password.
SECRET_ENV_PREFIX = "CONSOLE_SECRET_"
_SECRET_ENV = re.compile(rf"^{SECRET_ENV_PREFIX}[A-Z0-9_]+$")
SECRET_ENV_HELP = f"The name of an environment variable of the console's processes starting with {SECRET_ENV_PREFIX}"


def validate_bootstrap_servers(value: str) -> None:
    servers = [s.strip() for s in value.split(",")]
    if not all(servers) or not all(_HOST_PORT.match(s) for s in servers):
        raise ValidationError("Use host:port pairs separated by commas, e.g. 127.0.0.1:9092,127.0.0.1:9093.")


def validate_trust_store_path(value: str) -> None:
    """The CA file: a PEM file or a PKCS12 trust store."""
    _validate_tls_file(value, what=tls_stores.CA_FILE, formats=(tls_stores.PEM, tls_stores.PKCS12))


def validate_key_store_path(value: str) -> None:
    """The client certificate file: a PEM file or a PKCS12 key store."""
    _validate_tls_file(value, what=tls_stores.CERTIFICATE_FILE, formats=(tls_stores.PEM, tls_stores.PKCS12))


def validate_pem_path(value: str) -> None:
    """The client key file: a PEM file. (The name is older than PKCS12 stores: migrations name it.)"""
    _validate_tls_file(value, what=tls_stores.KEY_FILE, formats=(tls_stores.PEM,))


def _validate_tls_file(value: str, *, what: str, formats: tuple[str, ...]) -> None:
    """An absolute path; when the file can be read here, a format the console reads. A file this
    process cannot read is let through: the cluster's pages say so when the console connects."""
    if not value:
        return
    if not value.startswith("/"):
        raise ValidationError(f"{value!r} is not an absolute path: give the full path of the {what} on the "
                              "console's hosts.")
    try:
        found = tls_stores.store_format(value, what=what)
    except tls_stores.UnreadableFile:
        return
    except tls_stores.TlsStoreError as exc:
        raise ValidationError(_sentence(str(exc))) from None
    if found not in formats:
        raise ValidationError(f"The {what} {value} is a {found} store, not a PEM file: a PKCS12 key store goes in "
                              f"the {tls_stores.CERTIFICATE_FILE}, with no key file.")


def _sentence(text: str) -> str:
    return f"{text[:1].upper()}{text[1:]}."


def validate_secret_env_name(value: str) -> None:
    if value and not _SECRET_ENV.match(value):
        raise ValidationError(f"{value!r} is not allowed: secrets come only from environment variables named "
                              f"{SECRET_ENV_PREFIX}<NAME> (capitals, digits and _).")


def validate_token_endpoint_url(value: str) -> None:
    """An http:// or https:// URL with a host and no user or password in it (the URL is shown
    on pages and kept in the audit log: the client's secret has its own variable)."""
    if not value:
        return
    try:
        url = urllib.parse.urlsplit(value)
        url.port             # ValueError for a port that is not a number up to 65535
    except ValueError:
        url = None
    if url is None or url.scheme not in ("http", "https") or not url.hostname or any(c.isspace() for c in value):
        raise ValidationError(f"{value!r} is not an http:// or https:// URL, e.g. "
                              "https://idp.example.com/oauth2/token.")
    if url.username is not None or url.password is not None:
        raise ValidationError("Give the token endpoint's URL without a user or password in it: the client id "
                              "and the variable holding its secret have their own fields.")
    if url.fragment:
        raise ValidationError(f"{value!r} has a #fragment, which a token endpoint's URL cannot have.")


def secret_from_env(name: str, *, what: str, cluster_name: str) -> str:
    """The value of a CONSOLE_SECRET_* variable; rows saved before the prefix rule are refused too."""
    if not _SECRET_ENV.match(name):
        raise ConsoleError(f"Cluster {cluster_name!r} names {name!r} for its {what}, but secrets come only from "
                           f"environment variables named {SECRET_ENV_PREFIX}<NAME>. Edit the cluster.")
    value = os.environ.get(name, "")
    if not value:
        raise ConsoleError(f"Cluster {cluster_name!r} needs its {what} in the environment variable {name}, "
                           "which is empty.")
    return value


class Cluster(models.Model):
    """A Kafka cluster: where to bootstrap and how to authenticate.

    The SASL password itself never enters the database: `sasl_password_env` names the
    environment variable that holds it. With SASL OAUTHBEARER the console is an OAuth 2 client
    that gets its tokens with the client credentials grant (kafka_gateway/oauth_tokens.py), its
    secret named by `oauth_client_secret_env` likewise."""

    PROTOCOLS = [(p, p) for p in ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")]
    MECHANISMS = [("", "none")] + [(m, m) for m in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", OAUTHBEARER)]
    OAUTH_FIELDS = ("oauth_token_endpoint_url", "oauth_client_id", "oauth_client_secret_env", "oauth_scope")

    name = models.CharField(max_length=200, unique=True)
    bootstrap_servers = models.CharField(max_length=1000, validators=[validate_bootstrap_servers])
    security_protocol = models.CharField(max_length=16, choices=PROTOCOLS, default="PLAINTEXT")
    sasl_mechanism = models.CharField(max_length=16, choices=MECHANISMS, blank=True, default="")
    sasl_username = models.CharField(max_length=200, blank=True, default="")
    sasl_password_env = models.CharField(max_length=200, blank=True, default="",
                                         validators=[validate_secret_env_name],
                                         help_text="Name of the environment variable holding the SASL password.")
    # SASL OAUTHBEARER (KIP-768's names: sasl.oauthbearer.token.endpoint.url, clientId, clientSecret, scope).
    oauth_token_endpoint_url = models.CharField(
        max_length=500, blank=True, default="", validators=[validate_token_endpoint_url],
        help_text="OAUTHBEARER: the identity provider's OAuth 2 token endpoint.")
    oauth_client_id = models.CharField(max_length=200, blank=True, default="",
                                       help_text="OAUTHBEARER: the console's OAuth client id.")
    oauth_client_secret_env = models.CharField(
        max_length=200, blank=True, default="", validators=[validate_secret_env_name],
        help_text="OAUTHBEARER: name of the environment variable holding the OAuth client secret.")
    oauth_scope = models.CharField(max_length=500, blank=True, default="",
                                   help_text="OAUTHBEARER: the scope to ask tokens for (optional).")
    admin_token_env = models.CharField(
        max_length=200, blank=True, default="", validators=[validate_secret_env_name],
        help_text="Name of the environment variable holding the engine admin token (our engine only).")
    # TLS: paths of PEM files or PKCS12 stores on the console's hosts (the files themselves stay
    # there), read by console.kafka_gateway.tls_stores.
    ssl_cafile = models.CharField(
        max_length=500, blank=True, default="", validators=[validate_trust_store_path],
        help_text="CA certificates to trust: a PEM file or a PKCS12 trust store; empty: the system's trust store.")
    ssl_certfile = models.CharField(
        max_length=500, blank=True, default="", validators=[validate_key_store_path],
        help_text="The console's client certificate, for clusters that ask one: a PEM file, or a PKCS12 key store "
                  "holding the key and its chain.")
    ssl_keyfile = models.CharField(max_length=500, blank=True, default="", validators=[validate_pem_path],
                                   help_text="A PEM client certificate's private key (PEM); empty for a PKCS12 "
                                             "key store.")
    ssl_key_password_env = models.CharField(
        max_length=200, blank=True, default="", validators=[validate_secret_env_name],
        help_text="Name of the environment variable holding the PEM key's password, or the PKCS12 stores' "
                  "password.")
    is_bundled = models.BooleanField(default=False, help_text="The engine that `make run` starts.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-is_bundled", "name"]
        constraints = [models.UniqueConstraint(fields=["is_bundled"], condition=models.Q(is_bundled=True),
                                               name="one_bundled_cluster")]

    def __str__(self) -> str:
        return self.name

    def clean(self) -> None:
        self._clean_oauth()
        if self.ssl_keyfile and self.ssl_certfile and tls_stores.key_store_holds_key(self.ssl_certfile):
            raise ValidationError({"ssl_keyfile": f"The {tls_stores.CERTIFICATE_FILE} {self.ssl_certfile} is a "
                                                  "PKCS12 key store, which holds its own key: leave the key file "
                                                  "empty."})

    def _clean_oauth(self) -> None:
        """OAUTHBEARER needs its token endpoint, client id and secret variable, over SASL, and
        no SASL user or password; other mechanisms take none of the OAuth fields."""
        if self.sasl_mechanism != OAUTHBEARER:
            given = [name for name in self.OAUTH_FIELDS if getattr(self, name)]
            if given:
                raise ValidationError({given[0]: f"Only the SASL mechanism {OAUTHBEARER} uses the OAuth client's "
                                                 "settings: choose it, or leave them empty."})
            return
        errors = {name: f"{OAUTHBEARER} needs the {what}." for name, what in (
            ("oauth_token_endpoint_url", "identity provider's token endpoint URL"),
            ("oauth_client_id", "OAuth client id"),
            ("oauth_client_secret_env", "environment variable holding the OAuth client secret"))
            if not getattr(self, name)}
        if self.sasl_username or self.sasl_password_env:
            errors["sasl_username" if self.sasl_username else "sasl_password_env"] = (
                f"{OAUTHBEARER} logs in with the OAuth client's token: leave the SASL username and password "
                "variable empty.")
        if self.security_protocol not in ("SASL_PLAINTEXT", "SASL_SSL"):
            errors["security_protocol"] = f"{OAUTHBEARER} is a SASL mechanism: use SASL_SSL (or SASL_PLAINTEXT)."
        if errors:
            raise ValidationError(errors)

    def connection_settings(self) -> ConnectionSettings:
        password = client_secret = ""
        if self.sasl_mechanism == OAUTHBEARER:
            if not (self.oauth_token_endpoint_url and self.oauth_client_id and self.oauth_client_secret_env):
                raise ConsoleError(f"Cluster {self.name!r} uses {OAUTHBEARER}, but lacks its token endpoint, "
                                   "client id or client secret variable. Edit the cluster.")
            client_secret = secret_from_env(self.oauth_client_secret_env, what="OAuth client secret",
                                            cluster_name=self.name)
        elif self.sasl_mechanism:
            if not self.sasl_password_env:
                raise ConsoleError(f"Cluster {self.name!r} uses SASL, but names no environment variable "
                                   "holding its password.")
            password = secret_from_env(self.sasl_password_env, what="SASL password", cluster_name=self.name)
        key_password = secret_from_env(self.ssl_key_password_env, what="TLS key password", cluster_name=self.name) \
            if self.ssl_key_password_env else ""
        oauth = {"oauth_token_endpoint_url": self.oauth_token_endpoint_url, "oauth_client_id": self.oauth_client_id,
                 "oauth_client_secret": client_secret, "oauth_scope": self.oauth_scope} if client_secret else {}
        return ConnectionSettings(bootstrap_servers=self.bootstrap_servers, security_protocol=self.security_protocol,
                                  sasl_mechanism=self.sasl_mechanism, sasl_username=self.sasl_username,
                                  sasl_password=password, engine_admin_token=self.engine_admin_token(),
                                  ssl_cafile=self.ssl_cafile, ssl_certfile=self.ssl_certfile,
                                  ssl_keyfile=self.ssl_keyfile, ssl_key_password=key_password, **oauth)

    def engine_admin_token(self) -> str:
        """The token for the engine's admin port: the bundled engine's from ENGINE_ADMIN_TOKEN or
        its token file (the engine writes DATA_DIR/admin.token), other clusters' from the
        CONSOLE_SECRET_* variable they name. Empty when there is none: the engine refuses then."""
        from django.conf import settings

        if self.is_bundled:
            if settings.ENGINE_ADMIN_TOKEN:
                return settings.ENGINE_ADMIN_TOKEN
            try:
                return Path(settings.ENGINE_ADMIN_TOKEN_FILE).read_text().strip()
            except OSError:
                return ""
        if self.admin_token_env:
            return secret_from_env(self.admin_token_env, what="engine admin token", cluster_name=self.name)
        return ""


class KnownBroker(models.Model):
    """A broker the console has seen in a Metadata response (or in the engine's broker list).

    Metadata lists live brokers only; remembering the others is how the overview can say
    "broker 2 is down" instead of silently showing two brokers. (Moved here from the brokers
    app, table unchanged, so the cluster overview reads it without importing an app above it.)"""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="known_brokers")
    broker_id = models.IntegerField()
    host = models.CharField(max_length=255)
    port = models.IntegerField()
    rack = models.CharField(max_length=255, blank=True, default="")
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()

    class Meta:
        db_table = "brokers_knownbroker"
        ordering = ["cluster", "broker_id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "broker_id"], name="one_row_per_broker")]

    def __str__(self) -> str:
        return f"{self.cluster_id}/{self.broker_id} {self.host}:{self.port}"
