"""The SCRAM server against RFC 7677's SCRAM-SHA-256 example and kafka-python's SCRAM client."""
import base64

import pytest
from kafka.net.sasl.scram import ScramClient

from engine.security import scram
from engine.security.scram import ScramError, ScramServer

# RFC 7677, section 3: user "user", password "pencil".
RFC_SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
RFC_CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
RFC_SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
RFC_SERVER_FIRST = b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"
RFC_CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                    b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
RFC_SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server(password="pencil"):
    credential = scram.credential_from_password("SCRAM-SHA-256", password, salt=RFC_SALT, iterations=4096)
    return ScramServer("SCRAM-SHA-256", {"user": credential}.get, b"k" * 32, server_nonce=lambda: RFC_SERVER_NONCE)


def test_the_server_answers_rfc_7677s_example_exchange_byte_for_byte():
    server = rfc_server()
    assert server.evaluate(RFC_CLIENT_FIRST) == RFC_SERVER_FIRST
    assert server.evaluate(RFC_CLIENT_FINAL) == RFC_SERVER_FINAL
    assert server.complete and server.username == "user"


def test_a_proof_for_another_password_fails_without_saying_more():
    server = rfc_server(password="not-pencil")
    server.evaluate(RFC_CLIENT_FIRST)
    with pytest.raises(ScramError) as failure:
        server.evaluate(RFC_CLIENT_FINAL)
    assert not server.complete and "pencil" not in str(failure.value)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_kafka_pythons_client_logs_in_and_verifies_the_server(mechanism):
    credential = scram.credential_from_password(mechanism, "s3cret", iterations=4096)
    server = ScramServer(mechanism, {"alice": credential}.get, b"k" * 32)
    client = ScramClient("alice", "s3cret", mechanism)
    client.process_server_first_message(server.evaluate(client.first_message()))
    client.process_server_final_message(server.evaluate(client.final_message()))   # raises on a bad signature
    assert server.complete and server.username == "alice"


def test_an_unknown_user_gets_a_stable_made_up_salt_and_fails_only_at_the_proof():
    def first(server):
        return dict(item.split("=", 1) for item in server.evaluate(b"n,,n=nobody,r=abc").decode().split(","))

    one, two = ScramServer("SCRAM-SHA-256", lambda user: None, b"k" * 32), ScramServer(
        "SCRAM-SHA-256", lambda user: None, b"k" * 32)
    assert first(one)["s"] == first(two)["s"] and first(ScramServer(
        "SCRAM-SHA-256", lambda user: None, b"x" * 32))["i"] == "4096"
    client = ScramClient("nobody", "guess", "SCRAM-SHA-256")
    server = ScramServer("SCRAM-SHA-256", lambda user: None, b"k" * 32)
    client.process_server_first_message(server.evaluate(client.first_message()))
    with pytest.raises(ScramError):
        server.evaluate(client.final_message())


@pytest.mark.parametrize("token", [b"", b"\xff\xfe", b"garbage", b"p=tls-unique,,n=u,r=x", b"n,,r=x",
                                   b"n,,n=u,r=x,t=tokenauth", b"n,,n=a=b,r=x"])
def test_garbled_client_first_messages_are_refused(token):
    with pytest.raises(ScramError):
        ScramServer("SCRAM-SHA-256", lambda user: None, b"k" * 32).evaluate(token)


@pytest.mark.parametrize("final", [b"", b"c=biws,r=wrong,p=AAAA", b"c=eSws,r={nonce},p=AAAA",
                                   b"c=biws,r={nonce},p=!!notbase64", b"c=biws,r={nonce}", b"c=biws,r={nonce},p=AAAA"])
def test_garbled_client_final_messages_are_refused(final):
    server = rfc_server()
    server.evaluate(RFC_CLIENT_FIRST)
    nonce = RFC_SERVER_FIRST.split(b",")[0][2:]
    with pytest.raises(ScramError):
        server.evaluate(final.replace(b"{nonce}", nonce))
    assert not server.complete


def test_a_final_nonce_that_ends_with_the_server_nonce_is_accepted_as_kafka_accepts_it():
    """librdkafka 2.0 (Debian 12's kcat) puts its client nonce in front of the server-first nonce
    again; Kafka's ScramSaslServer only checks that the final nonce ends with the server's."""
    import hashlib
    import hmac
    server = rfc_server()
    server.evaluate(RFC_CLIENT_FIRST)
    nonce = RFC_SERVER_FIRST.split(b",")[0][2:]
    without_proof = b"c=biws,r=rOprNGfwEbeRWgbNEkqO" + nonce
    salted = scram.salted_password("SCRAM-SHA-256", "pencil", RFC_SALT, 4096)
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    auth_message = RFC_CLIENT_FIRST[3:] + b"," + RFC_SERVER_FIRST + b"," + without_proof
    signature = hmac.digest(hashlib.sha256(client_key).digest(), auth_message, "sha256")
    proof = base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature)))
    assert server.evaluate(without_proof + b",p=" + proof).startswith(b"v=")
    assert server.complete


def test_salted_password_credentials_match_password_credentials():
    """What AlterUserScramCredentials sends (PBKDF2 done by the client) gives the same keys."""
    import hashlib
    salted = hashlib.pbkdf2_hmac("sha512", b"pw", b"salt", 4096)
    assert scram.credential_from_salted_password("SCRAM-SHA-512", salted, b"salt", 4096) == \
        scram.credential_from_password("SCRAM-SHA-512", "pw", salt=b"salt", iterations=4096)
