"""A self-signed certificate for 127.0.0.1 / localhost, made with `cryptography`, for TLS listeners."""
from __future__ import annotations

import datetime
import ipaddress
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID


def write_self_signed(directory: Path) -> tuple[Path, Path]:
    """(keystore: key + certificate in one PEM file, for ssl.keystore.location; CA file for clients)."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "engine-test")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                               x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .sign(key, hashes.SHA256()))
    cert_pem = certificate.public_bytes(serialization.Encoding.PEM)
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    keystore, ca = directory / "keystore.pem", directory / "ca.pem"
    keystore.write_bytes(key_pem + cert_pem)
    keystore.chmod(0o600)
    ca.write_bytes(cert_pem)
    return keystore, ca


def client_context(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def write_client_certificate(directory: Path, subject: list[tuple[x509.ObjectIdentifier, str]],
                             name: str = "client") -> tuple[Path, Path]:
    """A client certificate with `subject` (e.g. [(NameOID.COMMON_NAME, "alice"), (NameOID.ORGANIZATION_NAME,
    "Acme")]) signed by a fresh CA: (key + certificate in one PEM file, the CA's certificate)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{name}-ca")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number())
          .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    certificate = (x509.CertificateBuilder()
                   .subject_name(x509.Name([x509.NameAttribute(oid, value) for oid, value in subject]))
                   .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(hours=1)).not_valid_after(now + datetime.timedelta(days=1))
                   .sign(ca_key, hashes.SHA256()))
    keystore, ca_file = directory / f"{name}.pem", directory / f"{name}-ca.pem"
    keystore.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption())
                         + certificate.public_bytes(serialization.Encoding.PEM))
    keystore.chmod(0o600)
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    return keystore, ca_file
