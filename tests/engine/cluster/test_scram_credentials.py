"""SCRAM credentials in the controller: Kafka's rules for AlterUserScramCredentials, and the
journal keeping only derived keys across a restart."""
import base64
import hashlib

import kafka.errors as Errors
import pytest

from engine.cluster.controller import Controller
from engine.config import BrokerConfig
from engine.security import scram
from engine.security.settings import INTER_BROKER_USER

SHA256, SHA512 = 1, 2


def upsert(user, mechanism=SHA256, password=b"pw", iterations=4096, salt=b"salty"):
    name = "sha256" if mechanism == SHA256 else "sha512"
    return (user, mechanism, iterations, salt, hashlib.pbkdf2_hmac(name, password, salt, iterations))


def errors(results):
    return {user: error.error if error else None for user, error in results}


def test_credentials_survive_a_restart_and_only_derived_keys_are_journaled(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    assert errors(controller.alter_user_scram_credentials([], [upsert("alice"), upsert("alice", SHA512)])) == \
        {"alice": None}
    salted = upsert("alice")[4]
    controller.shutdown()
    journal_bytes = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert b"alice" in journal_bytes     # the journal was read: the salted password itself is not in it
    assert base64.b64encode(salted) not in journal_bytes and salted.hex().encode() not in journal_bytes

    restarted = Controller(tmp_path, BrokerConfig())
    credential = restarted.scram_credential("alice", "SCRAM-SHA-256")
    assert credential == scram.credential_from_password("SCRAM-SHA-256", "pw", salt=b"salty", iterations=4096)
    assert restarted.scram_credential("alice", "SCRAM-SHA-512") is not None
    assert errors(restarted.alter_user_scram_credentials([("alice", SHA512)], [])) == {"alice": None}
    assert restarted.scram_credential("alice", "SCRAM-SHA-512") is None
    restarted.shutdown()


def test_kafkas_error_codes_and_a_users_changes_all_or_none(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    results = controller.alter_user_scram_credentials(
        [("ghost", SHA256), ("carol", SHA256)],
        [upsert("bob", iterations=1000), upsert("dave", mechanism=7), upsert("erin"), upsert("erin"),
         upsert(""), upsert(INTER_BROKER_USER), upsert("frank", salt=b""), upsert("carol")])
    assert errors(results) == {
        "ghost": Errors.ResourceNotFoundError, "carol": Errors.ResourceNotFoundError,
        "bob": Errors.UnacceptableCredentialError, "dave": Errors.UnsupportedSaslMechanismError,
        "erin": Errors.DuplicateResourceError, "": Errors.UnacceptableCredentialError,
        INTER_BROKER_USER: Errors.UnacceptableCredentialError, "frank": Errors.UnacceptableCredentialError}
    # carol's upsertion was fine but her deletion failed: nothing of hers applied; erin's first one neither.
    assert controller.image.scram_credentials == {}
    assert all("pw" not in (error.message or "") for _, error in results if error)
    controller.shutdown()


def test_describe_lists_mechanisms_and_iterations_never_keys(tmp_path):
    from engine.cluster import scram_credentials as SC
    controller = Controller(tmp_path, BrokerConfig())
    controller.alter_user_scram_credentials([], [upsert("alice", iterations=8192), upsert("bob", SHA512)])
    credentials = controller.image.scram_credentials
    assert SC.describe(credentials, None) == [("alice", None, [(SHA256, 8192)]), ("bob", None, [(SHA512, 4096)])]
    described = {user: (error.error if error else None, infos)
                 for user, error, infos in SC.describe(credentials, ["bob", "nobody", "alice", "alice"])}
    assert described == {"bob": (None, [(SHA512, 4096)]), "nobody": (Errors.ResourceNotFoundError, []),
                         "alice": (Errors.DuplicateResourceError, [])}
    controller.shutdown()


def test_a_damaged_credential_record_is_reported_without_its_keys(tmp_path):
    from engine.cluster import records as R
    from engine.cluster import scram_credentials as SC
    from engine.cluster.journal import MetadataCorruptError

    controller = Controller(tmp_path, BrokerConfig())
    record = SC.credential_record("alice", "SCRAM-SHA-256", scram.credential_from_password("SCRAM-SHA-256", "pw"))
    record["credential"]["iterations"] = 12        # below Kafka's minimum: makes no sense
    controller._journal.append([record])           # as a damaged journal would hold it
    controller._journal.close()
    with pytest.raises(MetadataCorruptError) as damaged:
        Controller(tmp_path, BrokerConfig())
    assert "alice" in str(damaged.value) and record["credential"]["stored_key"] not in str(damaged.value)
    assert R.printable(record)["credential"] == "<redacted>"
