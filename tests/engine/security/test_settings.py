"""Listener security settings: PLAINTEXT stays the default, bad settings are refused readably
(and never echo a password), the users file has JAAS's `user_<name>` keys."""
import subprocess
import sys

import pytest

from engine.config import InvalidConfigError
from engine.security import settings as S
from tests.support.engine_process import ROOT
from tests.support.tls import write_self_signed


def test_the_default_is_plaintext_without_sasl_or_tls():
    default = S.SecuritySettings()
    assert default.protocol == "PLAINTEXT" and not default.sasl and default.server_ssl is None
    assert "SecuritySettings(protocol='PLAINTEXT'" in repr(default) and default.decoy_key.hex() not in repr(default)


def test_the_users_file_reads_jaas_keys_and_refuses_bad_lines_without_echoing_them(tmp_path):
    users = tmp_path / "users"
    users.write_text('# comment\n\nuser_alice="a-secret"\nuser_bob = b=secret \n')
    assert S.read_users_file(str(users)) == {"alice": "a-secret", "bob": "b=secret"}
    users.write_text("user_alice=x\nalice=hunter2\n")
    with pytest.raises(InvalidConfigError) as bad:
        S.read_users_file(str(users))
    assert "line 2" in str(bad.value) and "hunter2" not in str(bad.value)
    users.write_text(f"user_{S.INTER_BROKER_USER}=x\n")
    with pytest.raises(InvalidConfigError, match="reserved"):
        S.read_users_file(str(users))


def test_bad_settings_are_refused(tmp_path):
    with pytest.raises(InvalidConfigError, match="GSSAPI"):
        S.build("SASL_PLAINTEXT", {"sasl.enabled.mechanisms": "GSSAPI"}, None)
    with pytest.raises(InvalidConfigError, match="sasl-users-file"):
        S.build("SASL_PLAINTEXT", {"sasl.enabled.mechanisms": "PLAIN"}, None)
    with pytest.raises(InvalidConfigError, match="ssl.keystore.location"):
        S.build("SSL", {}, None)
    with pytest.raises(InvalidConfigError, match="ssl.keystore.location x: cannot read the file"):
        S.build("SSL", {"ssl.keystore.type": "JKS", "ssl.keystore.location": "x"}, None)
    with pytest.raises(InvalidConfigError, match="must be one of PEM, PKCS12, JKS"):
        S.build("SSL", {"ssl.keystore.type": "BKS", "ssl.keystore.location": "x"}, None)
    with pytest.raises(InvalidConfigError, match="need --security-protocol"):
        S.build("PLAINTEXT", {"ssl.keystore.location": "x"}, None)
    scram_only = S.build("SASL_PLAINTEXT", {"sasl.enabled.mechanisms": "SCRAM-SHA-512"}, None)
    assert scram_only.sasl_enabled_mechanisms == ("SCRAM-SHA-512",)
    assert scram_only.scram_credential(S.INTER_BROKER_USER, "SCRAM-SHA-512") is None    # no one logs in as it
    keystore, _ = write_self_signed(tmp_path)
    tls = S.build("SASL_SSL", {"ssl.keystore.location": str(keystore), "sasl.enabled.mechanisms": "SCRAM-SHA-256"},
                  None)
    assert tls.server_ssl is not None


def test_serve_refuses_an_unreadable_keystore_with_exit_2(tmp_path):
    (tmp_path / "broken.pem").write_text("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")
    result = subprocess.run([sys.executable, "-m", "engine", "serve", "--data-dir", str(tmp_path / "data"),
                             "--brokers", "1", "--port", "1", "--no-admin", "--security-protocol", "SSL",
                             "--config", f"ssl.keystore.location={tmp_path / 'broken.pem'}"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "ssl.keystore.location" in result.stderr and "no private key could be read" in result.stderr
    assert "Traceback" not in result.stderr
