"""Connector configs checked as Connect checks them: `config/validate` answers every key with
its definition and its errors, a create or update with errors is Connect's 400 listing them,
and an unknown plugin is a 404 with Connect's message."""
from __future__ import annotations

from tests.support.connect_worker import request


def _errors(infos: dict) -> dict[str, list[str]]:
    return {c["value"]["name"]: c["value"]["errors"] for c in infos["configs"] if c["value"]["errors"]}


def test_validate_answers_each_field_with_its_errors(connect_cluster):
    code, infos, _ = request(connect_cluster[0], "PUT", "/connector-plugins/FileStreamSourceConnector/config/validate",
                             {"connector.class": "FileStreamSource", "name": "v", "topic": "",
                              "batch.size": "many", "tasks.max": "0"})
    assert code == 200
    assert infos["name"] == "org.apache.kafka.connect.file.FileStreamSourceConnector"
    assert _errors(infos) == {
        "tasks.max": ["Invalid value 0 for configuration tasks.max: Value must be at least 1"],
        "topic": ["Invalid value  for configuration topic: String must be non-empty"],
        "batch.size": ["Invalid value many for configuration batch.size: Not a number of type INT"]}
    assert infos["error_count"] == 3
    assert infos["groups"][:4] == ["Common", "Transforms", "Predicates", "Error Handling"]     # Kafka's order
    topic = next(c for c in infos["configs"] if c["definition"]["name"] == "topic")
    assert set(topic["definition"]) == {"name", "type", "required", "default_value", "importance", "documentation",
                                        "group", "width", "display_name", "dependents", "order"}
    assert set(topic["value"]) == {"name", "value", "recommended_values", "errors", "visible"}
    assert (topic["definition"]["type"], topic["definition"]["required"]) == ("STRING", True)


def test_validate_without_a_connector_class_uses_the_path_and_a_mismatch_is_refused(connect_cluster):
    code, infos, _ = request(connect_cluster[1], "PUT", "/connector-plugins/FileStreamSink/config/validate",
                             {"name": "s"})
    assert code == 200 and _errors(infos) == {"topics": ["Must configure one of topics or topics.regex"],
                                              "topics.regex": ["Must configure one of topics or topics.regex"]}
    code, body, _ = request(connect_cluster[1], "PUT", "/connector-plugins/FileStreamSink/config/validate",
                            {"connector.class": "FileStreamSource"})
    assert (code, body["message"]) == (400, "Included connector type FileStreamSource does not match request type "
                                             "FileStreamSink")


def test_a_create_with_errors_is_connects_400_and_nothing_is_stored(connect_cluster):
    code, body, _ = request(connect_cluster[1], "POST", "/connectors", {"name": "invalid", "config": {
        "connector.class": "FileStreamSink", "topics": "a", "topics.regex": "b.*"}})
    assert code == 400
    assert body["message"] == (
        "Connector configuration is invalid and contains the following 2 error(s):\n"
        "topics and topics.regex are mutually exclusive options, but both are set.\n"
        "topics and topics.regex are mutually exclusive options, but both are set.\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`")
    assert request(connect_cluster[0], "GET", "/connectors/invalid")[0] == 404


def test_unknown_plugins_get_connects_messages(connect_cluster):
    assert request(connect_cluster[0], "GET", "/connector-plugins/NoSuchConnector/config")[:2] == \
        (404, {"error_code": 404, "message": "Unknown plugin NoSuchConnector."})
    code, body, _ = request(connect_cluster[0], "POST", "/connectors", {"name": "ghost", "config": {
        "connector.class": "com.example.GhostConnector"}})
    assert code == 404
    assert body["message"].startswith("Failed to find any class that implements Connector and which name matches "
                                      "com.example.GhostConnector, available connectors are: PluginDesc{klass=")
    code, body, _ = request(connect_cluster[0], "POST", "/connectors", {"name": "classless", "config": {}})
    assert (code, body["message"]) == (400, "Connector config {name=classless} contains no connector type")


def test_a_password_keys_errors_never_show_its_value(connect_cluster):
    config = {"connector.class": "counting_plugin.GuardedSourceConnector", "name": "guarded", "topic": "t",
              "db.password": "short1", "db.passphrase": "with space9"}
    code, infos, _ = request(connect_cluster[0], "PUT", "/connector-plugins/GuardedSourceConnector/config/validate",
                             config)
    assert code == 200 and _errors(infos) == {
        "db.password": ["Invalid value [hidden] for configuration db.password: Password must be at least 8 "
                        "characters"],
        "db.passphrase": ["The password [hidden] holds a space"]}
    code, body, _ = request(connect_cluster[1], "POST", "/connectors", {"name": "guarded", "config": config})
    assert code == 400 and "[hidden]" in body["message"]
    assert "short1" not in body["message"] and "with space9" not in body["message"]
