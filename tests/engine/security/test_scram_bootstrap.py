"""`serve --add-scram`: the first SCRAM users of a SCRAM-only listener, added once."""
import pytest
from kafka.admin import KafkaAdminClient
from kafka.admin._users import UserScramCredentialUpsertion

from engine.config import InvalidConfigError
from engine.security import scram_bootstrap
from tests.support.engine_process import EngineProcess
from tests.support.raw_client import RawClient
from tests.support.sasl import raw_scram_login


def test_kafka_storages_syntax_is_parsed_and_bad_values_are_not_echoed():
    assert scram_bootstrap.parse("SCRAM-SHA-512=[name=alice,password=\"p4ss\",iterations=8192]") == \
        ("SCRAM-SHA-512", "alice", "p4ss", 8192)
    assert scram_bootstrap.parse("SCRAM-SHA-256=[name=bob,password=x]")[3] == 4096
    for bad in ("SCRAM-SHA-1=[name=a,password=s3cr3t]", "SCRAM-SHA-256=[name=a]",
                "SCRAM-SHA-256=[name=a,password=s3cr3t,salt=x]", "SCRAM-SHA-256=[name=a,password=s3cr3t,iterations=x]"):
        with pytest.raises(InvalidConfigError) as failure:
            scram_bootstrap.parse(bad)
        assert "s3cr3t" not in str(failure.value)


def test_a_scram_only_engine_starts_with_its_first_user_and_a_later_password_change_sticks(tmp_path):
    flag = "SCRAM-SHA-512=[name=alice,password=first-pw]"
    engine = EngineProcess(tmp_path / "data", brokers=1, admin=False,
                           extra_args=["--security-protocol", "SASL_PLAINTEXT", "--config",
                                       "sasl.enabled.mechanisms=SCRAM-SHA-512", "--add-scram", flag])

    def login(password: str) -> int:
        client = RawClient(engine.ports[0])
        try:
            return raw_scram_login(client, "alice", password, "SCRAM-SHA-512").error_code
        finally:
            client.close()

    engine.start(timeout=60)
    try:
        assert login("first-pw") == 0
        admin = KafkaAdminClient(bootstrap_servers=engine.bootstrap, security_protocol="SASL_PLAINTEXT",
                                 sasl_mechanism="SCRAM-SHA-512", sasl_plain_username="alice",
                                 sasl_plain_password="first-pw")
        assert admin.alter_user_scram_credentials(
            [UserScramCredentialUpsertion("alice", "SCRAM-SHA-512", "second-pw")]) == {"alice": None}
        admin.close()
        assert engine.terminate() == 0
        engine.start(timeout=60)            # the same --add-scram again: alice has a credential, kept
        assert login("second-pw") == 0 and login("first-pw") != 0
        assert "first-pw" not in engine.log_text()
    finally:
        engine.kill()
