"""Key stores and trust stores (engine/security/keystores.py): PKCS12 and JKS-named stores made
by keytool, PEM files and inline PEM; refusals name the config and never the password."""
from __future__ import annotations

import ssl
import tempfile
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization

from engine.security.keystores import KeyStoreError, load_key_store, read_key_store, read_trust_store
from tests.support.keytool import exported_certificate, key_store, trust_store
from tests.support.tls import write_self_signed

PASSWORD = "store-secret-7"


@pytest.fixture(scope="module")
def stores(tmp_path_factory) -> dict[str, Path]:
    directory = tmp_path_factory.mktemp("stores")
    p12 = key_store(directory / "broker.p12", PASSWORD)
    certificate = exported_certificate(p12, PASSWORD, directory / "broker.pem")
    return {"p12": p12, "certificate": certificate,
            "trust": trust_store(directory / "trust.p12", PASSWORD, certificate),
            "jks": key_store(directory / "old.jks", PASSWORD, store_type="JKS"),
            "java9-jks": key_store(directory / "named.jks", PASSWORD, store_type="PKCS12")}


def test_a_pkcs12_key_store_from_keytool_loads_into_a_server_context(stores):
    store = read_key_store({"ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(stores["p12"]),
                            "ssl.keystore.password": PASSWORD})
    assert store.chain_pem == stores["certificate"].read_bytes().replace(b"\r\n", b"\n")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    before = set(Path(tempfile.gettempdir()).glob("engine-keystore-*"))
    load_key_store(context, store)
    assert set(Path(tempfile.gettempdir()).glob("engine-keystore-*")) == before   # nothing left on disk


def test_a_jks_named_store_is_read_when_it_is_pkcs12_and_a_real_jks_is_refused_with_the_fix(stores):
    store = read_key_store({"ssl.keystore.type": "JKS", "ssl.keystore.location": str(stores["java9-jks"]),
                            "ssl.keystore.password": PASSWORD})
    assert store.chain_pem.startswith(b"-----BEGIN CERTIFICATE-----")
    with pytest.raises(KeyStoreError, match="keytool -importkeystore") as refused:
        read_key_store({"ssl.keystore.type": "JKS", "ssl.keystore.location": str(stores["jks"]),
                        "ssl.keystore.password": PASSWORD})
    assert PASSWORD not in str(refused.value)


def test_a_pkcs12_trust_store_from_keytool_gives_its_certificates(stores):
    authorities = read_trust_store({"ssl.truststore.type": "PKCS12", "ssl.truststore.location": str(stores["trust"]),
                                    "ssl.truststore.password": PASSWORD})
    assert authorities == stores["certificate"].read_bytes().replace(b"\r\n", b"\n")
    ssl.create_default_context(cadata=authorities.decode())     # a context takes them


def test_a_wrong_password_or_type_is_a_sentence_without_the_secret(stores):
    with pytest.raises(KeyStoreError, match="cannot open the PKCS12 store") as wrong:
        read_key_store({"ssl.keystore.location": str(stores["p12"]), "ssl.keystore.password": "not-" + PASSWORD})
    assert PASSWORD not in str(wrong.value)
    with pytest.raises(KeyStoreError, match="ssl.keystore.type is PEM, but ssl.keystore.location holds a PKCS12"):
        read_key_store({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(stores["p12"])})
    with pytest.raises(KeyStoreError, match="must be one of PEM, PKCS12, JKS"):
        read_key_store({"ssl.keystore.type": "BCFKS", "ssl.keystore.location": str(stores["p12"])})
    with pytest.raises(KeyStoreError, match="cannot read the file"):
        read_trust_store({"ssl.truststore.location": "/nonexistent/trust.p12"})


def test_pem_files_and_inline_pem(tmp_path):
    keystore, ca = write_self_signed(tmp_path)
    from_file = read_key_store({"ssl.keystore.location": str(keystore)})     # no type: read as what it is
    key_pem, chain_pem = keystore.read_text().split("-----END PRIVATE KEY-----\n")
    inline = read_key_store({"ssl.keystore.type": "PEM", "ssl.keystore.certificate.chain": chain_pem,
                             "ssl.keystore.key": key_pem + "-----END PRIVATE KEY-----\n"})
    assert inline.chain_pem == from_file.chain_pem == ca.read_bytes()
    load_key_store(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER), inline)
    assert read_trust_store({"ssl.truststore.certificates": ca.read_text()}) == ca.read_bytes()
    with pytest.raises(KeyStoreError, match="go together"):
        read_key_store({"ssl.keystore.key": key_pem})


def test_an_encrypted_pem_key_needs_its_password(tmp_path):
    keystore, _ = write_self_signed(tmp_path)
    plain = read_key_store({"ssl.keystore.location": str(keystore)})
    encrypted = tmp_path / "encrypted.pem"
    encrypted.write_bytes(plain.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.BestAvailableEncryption(b"key-secret"))
                          + plain.chain_pem)
    with pytest.raises(KeyStoreError, match="encrypted: set ssl.key.password"):
        read_key_store({"ssl.keystore.location": str(encrypted)})
    opened = read_key_store({"ssl.keystore.location": str(encrypted), "ssl.key.password": "key-secret"})
    assert opened.chain_pem == plain.chain_pem
