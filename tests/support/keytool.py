"""Key stores and trust stores made with Java's keytool, as operators make them for Kafka."""
from __future__ import annotations

import subprocess
from pathlib import Path


def keytool(*args: str) -> None:
    done = subprocess.run(["keytool", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def key_store(path: Path, password: str, *, store_type: str = "PKCS12", common_name: str = "localhost") -> Path:
    """A key pair with a self-signed certificate for localhost and 127.0.0.1."""
    keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1",
            "-dname", f"CN={common_name}", "-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2",
            "-keystore", str(path), "-storetype", store_type, "-storepass", password, "-keypass", password)
    return path


def exported_certificate(store: Path, password: str, into: Path) -> Path:
    """The store's certificate as a PEM file (for a client's CA file)."""
    keytool("-exportcert", "-rfc", "-alias", "broker", "-keystore", str(store), "-storepass", password,
            "-file", str(into))
    return into


def trust_store(path: Path, password: str, certificate: Path) -> Path:
    """A PKCS12 trust store holding `certificate` (a PEM file) as a trusted entry."""
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(certificate), "-keystore", str(path),
            "-storetype", "PKCS12", "-storepass", password)
    return path
