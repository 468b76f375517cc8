"""Which connector config values are secrets, in a config and in JSON as typed."""
from console.connect.masking import HIDDEN, masked, masked_json_text


def test_secrets_by_name_by_kafkas_password_keys_and_by_the_plugins_declaration():
    config = {"database.password": "a", "producer.override.ssl.keystore.key": "b", "api_key": "c",
              "pin": "d", "topic": "t", "empty.password": ""}
    assert masked(config, frozenset({"pin"})) == {
        "database.password": HIDDEN, "producer.override.ssl.keystore.key": HIDDEN, "api_key": HIDDEN,
        "pin": HIDDEN, "topic": "t", "empty.password": ""}


def test_json_as_typed_keeps_its_layout_and_loses_its_secrets():
    text = '{\n  "database.password" : "p\\"w",\n  "topic": "t",\n  "pin": 1234,\n  "token": "[hidden]"\n}'
    shown, typed = masked_json_text(text, frozenset({"pin"}))
    assert shown == '{\n  "database.password" : "[hidden]",\n  "topic": "t",\n  "pin": "[hidden]",\n  ' \
                    '"token": "[hidden]"\n}'
    assert typed == ["database.password", "pin"]


def test_json_with_a_syntax_error_still_loses_its_secrets():
    shown, typed = masked_json_text('{"config": {"secret.key": "abc", "a": "b" "token": tok3n', frozenset())
    assert "abc" not in shown and "tok3n" not in shown and typed == ["secret.key", "token"]
    assert masked_json_text('{"password": null, "secret": ""}') == ('{"password": null, "secret": ""}', [])
