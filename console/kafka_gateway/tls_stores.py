"""A cluster's TLS files, read in one place for every client the console opens to it.

ConnectionSettings (records.py) name them as Kafka's client configs would:
- `ssl_cafile`, the certificates to trust (Kafka's `ssl.truststore.location`): a PEM file, or a
  PKCS12 trust store opened with `ssl_key_password` (none: opened without a password);
- `ssl_certfile`, the console's client certificate (`ssl.keystore.location`): a PEM file whose
  key is in `ssl_keyfile` or in the same file, or a PKCS12 key store holding the key and its
  chain, opened with `ssl_key_password` (then `ssl_keyfile` is not read);
- `ssl_key_password`: the PEM key's password (`ssl.key.password`), or the PKCS12 stores'
  (`ssl.keystore.password`, `ssl.truststore.password`).
What a file is comes from its content, not its name (keytool's `.jks` files are PKCS12 since
Java 9). A store in Java's proprietary JKS format is refused with the keytool command that
converts it.

engine.security.keystores reads the stores. `ssl_context()` gives kafka-python's clients and
the TLS check (tls_check.py) their context; `librdkafka_ssl_options()` gives librdkafka (the
Spark data source) its settings: PEM files by path, a PKCS12 key store by path and password,
a PKCS12 trust store's certificates as PEM text. A file that cannot be read raises
TlsStoreError, a sentence naming the file and never the password.
"""
from __future__ import annotations

import os
import ssl
import stat
from pathlib import Path

from engine.security import keystores

from console.kafka_gateway.records import ConnectionSettings

CA_FILE, CERTIFICATE_FILE, KEY_FILE = "CA file", "client certificate file", "client key file"
PEM, PKCS12 = "PEM", "PKCS12"
JKS_CONVERSION = ("convert it with `keytool -importkeystore -srckeystore FILE.jks -destkeystore FILE.p12 "
                  "-deststoretype PKCS12` and give the .p12 file")


class TlsStoreError(ValueError):
    """A TLS file that cannot be used: says which and why, never a password."""


class UnreadableFile(TlsStoreError):
    """The file cannot be read by this process (missing, or not allowed)."""


def store_format(path: str, *, what: str) -> str:
    """PEM or PKCS12: what the file at `path` (the cluster's `what`) holds, read from its content.
    Raises UnreadableFile, or TlsStoreError for a JKS store or what is not a file (a pipe or a
    device would block or never end)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise TlsStoreError(f"the {what} {path} is not a regular file")
        with open(path, "rb") as file:
            head = file.read(len(keystores.JKS_MAGIC))
    except OSError as exc:
        raise UnreadableFile(f"the {what} {path} cannot be read ({exc.strerror or type(exc).__name__})") from None
    if head == keystores.JKS_MAGIC:
        raise TlsStoreError(f"the {what} {path} is a JKS store, Java's proprietary format, which the console "
                            f"cannot read: {JKS_CONVERSION}")
    try:
        return keystores.store_kind({"ssl.keystore.location": path}, "ssl.keystore")
    except keystores.KeyStoreError as exc:     # changed since it was opened above
        raise UnreadableFile(f"the {what} {path} cannot be read ({exc})") from None


def ssl_context(settings: ConnectionSettings) -> ssl.SSLContext:
    """The client context for the settings: their trust store's certificates (else the system's),
    their key store for a client certificate, and host names checked."""
    authorities = _trust_store_pem(settings)
    context = ssl.create_default_context(cadata=authorities.decode() if authorities else None)
    store = _key_store(settings)
    if store is not None:
        try:
            keystores.load_key_store(context, store)
        except ssl.SSLError as exc:
            raise TlsStoreError(f"the {CERTIFICATE_FILE} {settings.ssl_certfile} and its key do not go together "
                                f"({exc.reason or exc})") from None
    return context


def librdkafka_ssl_options(settings: ConnectionSettings) -> dict[str, str]:
    """librdkafka's `ssl.*` settings for the settings' files (the password only in memory)."""
    options: dict[str, str] = {}
    if settings.ssl_cafile:
        if store_format(settings.ssl_cafile, what=CA_FILE) == PEM:
            options["ssl.ca.location"] = settings.ssl_cafile
        else:
            options["ssl.ca.pem"] = _trust_store_pem(settings).decode()
    if settings.ssl_certfile:
        if store_format(settings.ssl_certfile, what=CERTIFICATE_FILE) == PKCS12:
            options["ssl.keystore.location"] = settings.ssl_certfile
            if settings.ssl_key_password:
                options["ssl.keystore.password"] = settings.ssl_key_password
        else:
            options["ssl.certificate.location"] = settings.ssl_certfile
            options["ssl.key.location"] = settings.ssl_keyfile or settings.ssl_certfile
            if settings.ssl_key_password:
                options["ssl.key.password"] = settings.ssl_key_password
    return options


def key_store_holds_key(path: str) -> bool:
    """Whether the client certificate file is a PKCS12 key store (which holds its own key, so
    no key file goes with it); False for a PEM file or a file that cannot be read here."""
    try:
        return store_format(path, what=CERTIFICATE_FILE) == PKCS12
    except TlsStoreError:
        return False


def _trust_store_pem(settings: ConnectionSettings) -> bytes | None:
    path = settings.ssl_cafile
    if not path:
        return None
    found = store_format(path, what=CA_FILE)
    configs = {"ssl.truststore.location": path, "ssl.truststore.type": found}
    if found == PKCS12 and settings.ssl_key_password:
        configs["ssl.truststore.password"] = settings.ssl_key_password
    try:
        return keystores.read_trust_store(configs)
    except keystores.KeyStoreError as exc:
        if found == PKCS12:
            raise TlsStoreError(f"the {CA_FILE} {path} is a PKCS12 trust store {_not_opened(settings)}, or that "
                                "holds no certificate") from None
        raise TlsStoreError(f"the {CA_FILE} {path} cannot be used ({exc})") from None


def _key_store(settings: ConnectionSettings) -> keystores.KeyStore | None:
    path = settings.ssl_certfile
    if not path:
        return None
    found = store_format(path, what=CERTIFICATE_FILE)
    password = settings.ssl_key_password
    if found == PKCS12:
        configs = {"ssl.keystore.type": PKCS12, "ssl.keystore.location": path}
        if password:
            configs["ssl.keystore.password"] = password
    elif settings.ssl_keyfile and settings.ssl_keyfile != path:
        # The certificate and its key in two PEM files: given to the engine inline (KIP-651).
        if store_format(settings.ssl_keyfile, what=KEY_FILE) != PEM:
            raise TlsStoreError(f"the {KEY_FILE} {settings.ssl_keyfile} is not a PEM file: a PKCS12 key store "
                                f"goes in the {CERTIFICATE_FILE}, with no key file")
        configs = {"ssl.keystore.certificate.chain": _text(path, what=CERTIFICATE_FILE),
                   "ssl.keystore.key": _text(settings.ssl_keyfile, what=KEY_FILE)}
    else:
        configs = {"ssl.keystore.type": PEM, "ssl.keystore.location": path}
    if found == PEM and password:
        configs["ssl.key.password"] = password
    try:
        return keystores.read_key_store(configs)
    except keystores.KeyStoreError as exc:
        if found == PKCS12:
            raise TlsStoreError(f"the {CERTIFICATE_FILE} {path} is a PKCS12 key store {_not_opened(settings)}, or "
                                "that holds no private key with its certificate") from None
        raise TlsStoreError(f"the {CERTIFICATE_FILE} {path} cannot be used ({exc})") from None


def _not_opened(settings: ConnectionSettings) -> str:
    return "that the key password does not open (a wrong password)" if settings.ssl_key_password \
        else "that cannot be opened without a password (name the key password's environment variable)"


def _text(path: str, *, what: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise UnreadableFile(f"the {what} {path} cannot be read ({getattr(exc, 'strerror', None) or exc})") \
            from None
