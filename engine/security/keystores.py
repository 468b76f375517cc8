"""Key stores and trust stores, as Kafka's `ssl.keystore.*` and `ssl.truststore.*` configs give
them, read into Python's `ssl` contexts.

Types (`ssl.keystore.type`, `ssl.truststore.type`):
- PEM: a file (`*.location`) with the certificate chain and the private key, encrypted with
  `ssl.key.password` or not; or, inline (KIP-651), `ssl.keystore.certificate.chain` and
  `ssl.keystore.key` for a key store and `ssl.truststore.certificates` for a trust store;
- PKCS12: a file opened with `ssl.keystore.password` (or `ssl.truststore.password`), as
  `keytool -storetype PKCS12` and `openssl pkcs12 -export` write it; the key's own password
  (`ssl.key.password`) is tried when the store's does not open the key;
- JKS (Kafka's default name): read when the file is really PKCS12, as the stores keytool has
  written by default since Java 9 are. A store in Sun's proprietary JKS format is refused with
  the keytool command that converts it.
With no type given, a file is read as what it is (PEM or PKCS12).

The private key stays in memory. `ssl` loads a key only from a file, so it is written for the
moment of loading to a private temporary directory (mode 0700), encrypted with a random
one-time passphrase, and removed at once. Passwords are never put in an error message.
"""
from __future__ import annotations

import os
import secrets
import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12

JKS_MAGIC = b"\xfe\xed\xfe\xed"
STORE_TYPES = ("PEM", "PKCS12", "JKS")


class KeyStoreError(ValueError):
    """A store that cannot be read: the sentence says which config and why, never a secret."""


@dataclass(frozen=True)
class KeyStore:
    """A certificate chain (PEM) and its private key."""
    chain_pem: bytes
    key: object = field(repr=False)        # a cryptography private key


def store_kind(configs: dict[str, str], prefix: str) -> str | None:
    """How the `ssl.keystore` or `ssl.truststore` configs give their store: "inline" (PEM in
    the configs), "PEM" or "PKCS12" (a file), None (none given); raises KeyStoreError."""
    inline = ("ssl.keystore.key", "ssl.keystore.certificate.chain") if prefix == "ssl.keystore" \
        else ("ssl.truststore.certificates",)
    if any(configs.get(name) for name in inline):
        return "inline"
    location = configs.get(f"{prefix}.location")
    if not location:
        return None
    return _kind(_read(location, f"{prefix}.location"), _store_type(configs, f"{prefix}.type"), prefix)


def client_context(configs: dict[str, str]) -> ssl.SSLContext:
    """A client's TLS context from Kafka's client configs: the trust store's CAs (else the
    system's), the key store for a client certificate, and hostname checks unless
    `ssl.endpoint.identification.algorithm` is empty."""
    authorities = read_trust_store(configs)
    context = ssl.create_default_context(cadata=authorities.decode() if authorities else None)
    context.check_hostname = configs.get("ssl.endpoint.identification.algorithm", "https") != ""
    store = read_key_store(configs)
    if store is not None:
        load_key_store(context, store)
    return context


def read_key_store(configs: dict[str, str]) -> KeyStore | None:
    """The key store the `ssl.keystore.*` configs name; None if they name none."""
    store_type = _store_type(configs, "ssl.keystore.type")
    inline_key, inline_chain = configs.get("ssl.keystore.key"), configs.get("ssl.keystore.certificate.chain")
    location = configs.get("ssl.keystore.location")
    if inline_key or inline_chain:
        if not (inline_key and inline_chain):
            raise KeyStoreError("ssl.keystore.key and ssl.keystore.certificate.chain go together (KIP-651)")
        if location:
            raise KeyStoreError("ssl.keystore.location cannot be given with ssl.keystore.key")
        return _pem_key_store(inline_chain.encode() + b"\n" + inline_key.encode(), configs.get("ssl.key.password"),
                              "ssl.keystore.key")
    if not location:
        return None
    data = _read(location, "ssl.keystore.location")
    if _kind(data, store_type, "ssl.keystore") == "PEM":
        return _pem_key_store(data, configs.get("ssl.key.password"), f"ssl.keystore.location {location}")
    return _pkcs12_key_store(data, configs, location)


def read_trust_store(configs: dict[str, str]) -> bytes | None:
    """The CA certificates (PEM) the `ssl.truststore.*` configs name; None if they name none."""
    store_type = _store_type(configs, "ssl.truststore.type")
    inline = configs.get("ssl.truststore.certificates")
    location = configs.get("ssl.truststore.location")
    if inline:
        if location:
            raise KeyStoreError("ssl.truststore.location cannot be given with ssl.truststore.certificates")
        return _pem_certificates(inline.encode(), "ssl.truststore.certificates")
    if not location:
        return None
    data = _read(location, "ssl.truststore.location")
    if _kind(data, store_type, "ssl.truststore") == "PEM":
        return _pem_certificates(data, f"ssl.truststore.location {location}")
    password = configs.get("ssl.truststore.password")
    try:
        store = pkcs12.load_pkcs12(data, password.encode() if password else None)
    except ValueError:
        raise KeyStoreError(f"ssl.truststore.location {location}: cannot open the PKCS12 store "
                            "(wrong ssl.truststore.password, or not a PKCS12 file)") from None
    certificates = [c.certificate for c in store.additional_certs] + ([store.cert.certificate] if store.cert else [])
    if not certificates:
        raise KeyStoreError(f"ssl.truststore.location {location}: the store holds no certificate")
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certificates)


def load_key_store(context: ssl.SSLContext, store: KeyStore) -> None:
    """Give `context` the store's certificate chain and key (see the module's docstring)."""
    passphrase = secrets.token_urlsafe(32).encode()
    key_pem = store.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.BestAvailableEncryption(passphrase))
    with tempfile.TemporaryDirectory(prefix="engine-keystore-") as directory:
        path = Path(directory) / "keystore.pem"
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(store.chain_pem + key_pem)
        try:
            context.load_cert_chain(str(path), password=passphrase)
        finally:
            path.unlink()


# --- reading ------------------------------------------------------------------------------------

def _store_type(configs: dict[str, str], name: str) -> str | None:
    value = configs.get(name)
    if value is None or value == "":
        return None
    if value.upper() not in STORE_TYPES:
        raise KeyStoreError(f"{name} must be one of {', '.join(STORE_TYPES)}, not {value!r}")
    return value.upper()


def _read(location: str, name: str) -> bytes:
    try:
        return Path(location).read_bytes()
    except OSError as exc:
        raise KeyStoreError(f"{name} {location}: cannot read the file ({exc.strerror or type(exc).__name__})") \
            from None


def _kind(data: bytes, store_type: str | None, prefix: str) -> str:
    """What the file is, PEM or PKCS12, checked against the type the configs say."""
    if data.startswith(JKS_MAGIC):
        raise KeyStoreError(f"{prefix}.location is a JKS store, Java's proprietary format, which the engine "
                            "cannot read: convert it with `keytool -importkeystore -srckeystore FILE.jks "
                            f"-destkeystore FILE.p12 -deststoretype PKCS12` and set {prefix}.type=PKCS12")
    found = "PEM" if b"-----BEGIN" in data[:4096] else "PKCS12"
    if store_type is not None and (store_type == "PEM") != (found == "PEM"):
        raise KeyStoreError(f"{prefix}.type is {store_type}, but {prefix}.location holds a {found} store")
    return found


def _pem_key_store(data: bytes, key_password: str | None, where: str) -> KeyStore:
    try:
        key = serialization.load_pem_private_key(data, key_password.encode() if key_password else None)
    except TypeError:
        raise KeyStoreError(f"{where}: the private key is encrypted: set ssl.key.password") from None
    except ValueError:
        raise KeyStoreError(f"{where}: no private key could be read (a wrong ssl.key.password, or no "
                            "PRIVATE KEY block)") from None
    chain = _pem_certificates(data, where)
    return KeyStore(chain, key)


def _pkcs12_key_store(data: bytes, configs: dict[str, str], location: str) -> KeyStore:
    where = f"ssl.keystore.location {location}"
    store = None
    for name in ("ssl.keystore.password", "ssl.key.password"):
        password = configs.get(name)
        try:
            store = pkcs12.load_pkcs12(data, password.encode() if password else None)
            break
        except ValueError:
            continue
    if store is None:
        raise KeyStoreError(f"{where}: cannot open the PKCS12 store (wrong ssl.keystore.password or "
                            "ssl.key.password, or not a PKCS12 file)")
    if store.key is None or store.cert is None:
        raise KeyStoreError(f"{where}: the store holds no private key with its certificate")
    chain = [store.cert.certificate] + [c.certificate for c in store.additional_certs]
    return KeyStore(b"".join(c.public_bytes(serialization.Encoding.PEM) for c in chain), store.key)


def _pem_certificates(data: bytes, where: str) -> bytes:
    try:
        certificates = x509.load_pem_x509_certificates(data)
    except ValueError:
        raise KeyStoreError(f"{where}: no certificate could be read") from None
    return b"".join(c.public_bytes(serialization.Encoding.PEM) for c in certificates)
