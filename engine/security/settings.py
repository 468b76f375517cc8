"""Listener security: which protocol the client listeners speak, with Kafka's names.

`python -m engine serve` stays PLAINTEXT with no authentication unless told otherwise:
  --security-protocol PLAINTEXT | SASL_PLAINTEXT | SASL_SSL | SSL   (Kafka's listener protocols)
  --config sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN  (the default list, as here;
    OAUTHBEARER too when named, with the sasl.oauthbearer.* configs: engine/security/oauthbearer.py)
  --sasl-users-file FILE       PLAIN users, one `user_<name>=<password>` a line (JAAS's keys)
  --config ssl.keystore.type=PEM|PKCS12 --config ssl.keystore.location=FILE  (key + certificate chain)
  --config ssl.keystore.password=...  (PKCS12) --config ssl.key.password=...  (an encrypted key)
  --config ssl.keystore.key=PEM --config ssl.keystore.certificate.chain=PEM  (inline, KIP-651)
  --config ssl.client.auth=required|requested --config ssl.truststore.location=FILE  (SSL: client
    certificates, checked against the truststore's CA certificates; ssl.truststore.type=PEM|PKCS12,
    ssl.truststore.password, or inline ssl.truststore.certificates)
  Key stores and trust stores are read by engine/security/keystores.py.
  --config ssl.principal.mapping.rules=...  (a client certificate's subject -> its user)
  --config connections.max.reauth.ms=MS  (KIP-368: SASL sessions last at most this long, then a
    connection must re-authenticate; 0, the default, leaves them unbounded but for an
    OAUTHBEARER token's expiry: engine/security/session.py)
Each may be given for one listener as `listener.name.<name>.<config>` (engine/security/listeners.py),
and connections.max.reauth.ms for one listener and mechanism as
`listener.name.<name>.<mechanism>.connections.max.reauth.ms` (the mechanism in lower case), as in Kafka.
These configs are taken out before the broker configs are built, so they are not shown by
DescribeConfigs (a gap: Kafka shows them, passwords as null).

SCRAM credentials live in the controller's metadata image (AlterUserScramCredentials,
engine/cluster/scram_credentials.py), so they are read at each login and changes apply at once.

Inter-broker: the brokers reach each other over socket pairs inside the process
(engine/protocol/inter_broker.py), never through a client listener, so they need neither TLS
nor a login there. Requests on those connections run as the principal INTER_BROKER_USER,
whose name is reserved: the users file and AlterUserScramCredentials may not define it, and
no password logs in as it.
"""
from __future__ import annotations

import re
import secrets
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from cryptography import x509

from engine.config import LISTENER_PREFIXED_CONFIGS, InvalidConfigError
from engine.security import keystores, oauthbearer, scram
from engine.security.tls_principal import PrincipalMapper

PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT", "SASL_SSL", "SSL")
MECHANISMS = ("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN")           # enabled when none are named
SUPPORTED_MECHANISMS = (*MECHANISMS, "OAUTHBEARER")
INTER_BROKER_USER = "__engine-inter-broker"
MAX_REAUTH_CONFIG = "connections.max.reauth.ms"       # KIP-368, Kafka's BrokerSecurityConfigs
_SECURITY_CONFIGS = ("sasl.enabled.mechanisms", "ssl.keystore.type", "ssl.keystore.location", "ssl.keystore.password",
                     "ssl.key.password", "ssl.keystore.key", "ssl.keystore.certificate.chain", "ssl.client.auth",
                     "ssl.truststore.type", "ssl.truststore.location", "ssl.truststore.password",
                     "ssl.truststore.certificates", "ssl.principal.mapping.rules", *oauthbearer.OAUTH_CONFIGS,
                     MAX_REAUTH_CONFIG)
LISTENER_SECURITY_CONFIGS = _SECURITY_CONFIGS      # each may also be given as listener.name.<name>.<config>
CLIENT_AUTH = ("none", "requested", "required")


@dataclass
class SecuritySettings:
    protocol: str = "PLAINTEXT"
    listener: str = ""                               # the listener's name ("" before listeners.py names it)
    sasl_enabled_mechanisms: tuple[str, ...] = MECHANISMS
    ssl_client_auth: str = "none"                    # SSL listeners: ask for client certificates
    principal_mapper: PrincipalMapper | None = None  # the certificate subject -> user (ssl.principal.mapping.rules)
    plain_users: dict[str, str] = field(default_factory=dict, repr=False)
    server_ssl: ssl.SSLContext | None = None
    server_certificate: x509.Certificate | None = field(default=None, repr=False)   # its key store's leaf
    tls_configs: dict[str, str] = field(default_factory=dict, repr=False)          # as given (with secrets)
    decoy_key: bytes = field(default_factory=lambda: secrets.token_bytes(32), repr=False)
    scram_lookup: Callable[[str, str], scram.ScramCredential | None] = field(default=lambda user, mech: None,
                                                                            repr=False)
    oauth: oauthbearer.Validator | None = field(default=None, repr=False)   # with OAUTHBEARER enabled
    # KIP-368: the longest session of each enabled mechanism before re-authentication, in ms;
    # 0 or less: none (connections.max.reauth.ms, or its per mechanism form).
    connections_max_reauth_ms: dict[str, int] = field(default_factory=dict)

    @property
    def sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    def plain_password(self, user: str) -> str | None:
        return self.plain_users.get(user)

    def scram_credential(self, user: str, mechanism: str) -> scram.ScramCredential | None:
        return None if user == INTER_BROKER_USER else self.scram_lookup(user, mechanism)

    def oauth_token(self, token: str) -> oauthbearer.ValidToken:
        """The principal an OAUTHBEARER token names, and its expiry; raises
        oauthbearer.TokenRejected (also for the brokers' reserved name, which no token may claim)."""
        valid = self.oauth.validate(token)
        if valid.principal == INTER_BROKER_USER:
            raise oauthbearer.TokenRejected("the token's principal is reserved")
        return valid


def take_security_configs(configs: dict[str, str]) -> dict[str, str]:
    """Remove the listener-security configs (and their `listener.name.<name>.` forms) from
    the broker configs, and return them. The per-listener forms of broker configs
    (`listener.name.<name>.max.connection.creation.rate`) stay broker configs."""
    return {name: configs.pop(name) for name in list(configs)
            if name in _SECURITY_CONFIGS or (name.startswith("listener.name.") and not _broker_config(name))}


def _broker_config(name: str) -> bool:
    return any(name.endswith("." + config) for config in LISTENER_PREFIXED_CONFIGS)


def build(protocol: str, configs: dict[str, str], users_file: str | None, *, listener: str = "") -> SecuritySettings:
    """One listener's settings; `configs` are the security configs as they apply to it."""
    if protocol not in PROTOCOLS:
        raise InvalidConfigError(f"security protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
    mechanisms = tuple(m.strip() for m in configs.get("sasl.enabled.mechanisms", ",".join(MECHANISMS)).split(",")
                       if m.strip())
    unknown = [m for m in mechanisms if m not in SUPPORTED_MECHANISMS]
    if unknown or not mechanisms:
        raise InvalidConfigError(f"sasl.enabled.mechanisms: supported are {', '.join(SUPPORTED_MECHANISMS)}; got "
                                 f"{', '.join(mechanisms) or 'none'}")
    client_auth = configs.get("ssl.client.auth", "none").strip().lower()
    if client_auth not in CLIENT_AUTH:
        raise InvalidConfigError(f"ssl.client.auth must be one of {', '.join(CLIENT_AUTH)}, not {client_auth!r}")
    settings = SecuritySettings(protocol=protocol, listener=listener or protocol, sasl_enabled_mechanisms=mechanisms,
                                plain_users=read_users_file(users_file) if users_file else {},
                                ssl_client_auth=client_auth if protocol == "SSL" else "none",
                                principal_mapper=PrincipalMapper(configs.get("ssl.principal.mapping.rules", "DEFAULT")))
    settings.connections_max_reauth_ms = _max_reauth_ms(configs, mechanisms)
    if "OAUTHBEARER" in mechanisms and settings.sasl:
        settings.oauth = _oauth_validator(configs)
    if "PLAIN" in mechanisms and settings.sasl and not users_file:
        raise InvalidConfigError("PLAIN is enabled but no --sasl-users-file names its users "
                                 "(or leave PLAIN out of sasl.enabled.mechanisms)")
    if protocol in ("SASL_SSL", "SSL"):
        settings.tls_configs = {k: v for k, v in configs.items() if k.startswith("ssl.")}
        settings.server_ssl, settings.server_certificate = server_tls(settings.tls_configs, settings.ssl_client_auth)
    elif any(name.startswith("ssl.") for name in configs):
        raise InvalidConfigError(f"ssl.* configs need --security-protocol SSL or SASL_SSL (or a listener of one), "
                                 f"not {protocol}{f' (listener {listener})' if listener else ''}")
    return settings


def listener_security_config(config: str) -> bool:
    """Whether `listener.name.<name>.<config>` may be given: a listener security config, or
    `<mechanism>.connections.max.reauth.ms` with a mechanism's name in lower case, as Kafka's
    SASL mechanism prefix spells it."""
    mechanism, _, rest = config.partition(".")
    return config in LISTENER_SECURITY_CONFIGS or (
        rest == MAX_REAUTH_CONFIG and mechanism in (m.lower() for m in SUPPORTED_MECHANISMS))


def _max_reauth_ms(configs: dict[str, str], mechanisms: tuple[str, ...]) -> dict[str, int]:
    """connections.max.reauth.ms for each mechanism: its `<mechanism>.` form, else the plain
    one (Kafka's SaslChannelBuilder); a LONG, where anything not above 0 means none."""
    result = {}
    for mechanism in mechanisms:
        name = f"{mechanism.lower()}.{MAX_REAUTH_CONFIG}"
        name = name if name in configs else MAX_REAUTH_CONFIG
        raw = str(configs.get(name, "0")).strip()
        if not re.fullmatch(r"[+-]?[0-9]+", raw) or not -2**63 <= int(raw) < 2**63:
            raise InvalidConfigError(f"Invalid value {raw} for configuration {name}: Not a number of type LONG")
        result[mechanism] = int(raw)
    return result


def _oauth_validator(configs: dict[str, str]) -> oauthbearer.Validator:
    try:
        return oauthbearer.validator(configs)
    except ValueError as exc:
        raise InvalidConfigError(f"sasl.oauthbearer.*: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - the JWKS could not be fetched or read
        raise InvalidConfigError(f"sasl.oauthbearer.jwks.endpoint.url: cannot read the keys "
                                 f"({type(exc).__name__}: {exc})") from None


def read_users_file(path: str) -> dict[str, str]:
    """`user_<name>=<password>` lines (the password may be in double quotes); `#` comments."""
    users = {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise InvalidConfigError(f"cannot read the SASL users file {path}: {exc.strerror}") from None
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, password = line.partition("=")
        name = key.strip().removeprefix("user_")
        if not sep or not key.strip().startswith("user_") or not name:
            # The line may hold a password: say where, never what.
            raise InvalidConfigError(f"{path}, line {number}: expected user_<name>=<password>")
        if name == INTER_BROKER_USER or name in users:
            raise InvalidConfigError(f"{path}, line {number}: user {name!r} is reserved or given twice")
        password = password.strip()
        if len(password) >= 2 and password[0] == password[-1] == '"':
            password = password[1:-1]
        users[name] = password
    return users


def server_tls(configs: dict[str, str], client_auth: str) -> tuple[ssl.SSLContext, x509.Certificate]:
    """A listener's TLS context from its key store, and its trust store when it asks for
    client certificates (PEM or PKCS12 files, or inline PEM: engine/security/keystores.py),
    with the key store's leaf certificate."""
    try:
        store = keystores.read_key_store(configs)
    except keystores.KeyStoreError as exc:
        raise InvalidConfigError(str(exc)) from None
    if store is None:
        raise InvalidConfigError("TLS needs a key store: ssl.keystore.location (a PEM file with the private key "
                                 "and the certificate chain, or a PKCS12 store), or ssl.keystore.key with "
                                 "ssl.keystore.certificate.chain")
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        keystores.load_key_store(server, store)
    except ssl.SSLError as exc:
        raise InvalidConfigError(f"the key store's key and certificate do not load together ({exc.reason})") \
            from None
    if client_auth != "none":
        _verify_clients(server, configs, client_auth)
    return server, x509.load_pem_x509_certificate(store.chain_pem)


def reloaded_tls(security: SecuritySettings, dynamic: dict[str, str],
                 current: x509.Certificate) -> tuple[ssl.SSLContext, x509.Certificate]:
    """A listener's TLS context with the key store and trust store configs set at run time
    (`listener.name.<name>.ssl.*` on one broker, AlterConfigs) over its own, as Kafka reloads
    its SslFactory; raises InvalidConfigError when a store cannot be read, or when the new
    certificate's subject or subject alternative names differ from `current`'s (Kafka refuses
    those unless ssl.allow.dn.changes / ssl.allow.san.changes, which the engine does not take)."""
    configs = {**security.tls_configs, **dynamic}
    if any(name in dynamic for name in ("ssl.keystore.key", "ssl.keystore.certificate.chain")):
        configs.pop("ssl.keystore.location", None)      # an inline store given at run time replaces the file
    context, certificate = server_tls(configs, security.ssl_client_auth)
    if certificate.subject != current.subject:
        raise InvalidConfigError(f"Validation of dynamic config update of SSLFactory failed: keystore "
                                 f"DistinguishedName does not match: existing={current.subject.rfc4514_string()}, "
                                 f"new={certificate.subject.rfc4514_string()}")
    if _subject_alt_names(certificate) != _subject_alt_names(current):
        raise InvalidConfigError("Validation of dynamic config update of SSLFactory failed: keystore "
                                 "SubjectAltName does not match the existing certificate's")
    return context, certificate


def _subject_alt_names(certificate: x509.Certificate) -> set[str]:
    try:
        names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return {str(name.value) for name in names}


def _verify_clients(server: ssl.SSLContext, configs: dict[str, str], client_auth: str) -> None:
    """ssl.client.auth=required|requested: client certificates are checked against the CA
    certificates of the trust store."""
    try:
        authorities = keystores.read_trust_store(configs)
    except keystores.KeyStoreError as exc:
        raise InvalidConfigError(str(exc)) from None
    if authorities is None:
        raise InvalidConfigError(f"ssl.client.auth={client_auth} needs a trust store with the certificates of the "
                                 "CAs that sign client certificates: ssl.truststore.location (PEM or PKCS12) or "
                                 "ssl.truststore.certificates")
    server.load_verify_locations(cadata=authorities.decode())
    server.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
