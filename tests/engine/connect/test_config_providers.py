"""Config providers (engine/connect/config_providers.py): `${file:...}`, `${dir:...}` and
`${env:...}` resolved for the connector and its tasks, never stored or shown resolved."""
from __future__ import annotations

import pytest

from engine.connect.config_providers import DIRECTORY, ENV, FILE, ConfigProviderError, ConfigProviders
from tests.support.connect_worker import ConnectWorker, request, running
from tests.support.groups import create_topic
from tests.support.waiting import wait_until


def providers(tmp_path, **params) -> ConfigProviders:
    props = {"config.providers": "file,dir,env", "config.providers.file.class": FILE,
             "config.providers.dir.class": DIRECTORY, "config.providers.env.class": ENV}
    props.update({f"config.providers.{name}": value for name, value in params.items()})
    return ConfigProviders(props)


def test_variables_are_resolved_and_unknown_ones_left_as_they_are(tmp_path, monkeypatch):
    (tmp_path / "db.properties").write_text("user=app\npassword=s3cret\n")
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "token").write_text("t0ken")
    monkeypatch.setenv("CONNECT_TEST_HOST", "db.internal")
    config = {"connection.url": "jdbc://${env:CONNECT_TEST_HOST}:5432/app",
              "connection.password": f"${{file:{tmp_path}/db.properties:password}}",
              "api.token": f"${{dir:{tmp_path}/secrets:token}}",
              "kept": "${vault:secret/db:password}", "missing": f"${{file:{tmp_path}/db.properties:nope}}",
              "plain": "value"}
    resolved = providers(tmp_path).transform(config)
    assert resolved == {"connection.url": "jdbc://db.internal:5432/app", "connection.password": "s3cret",
                        "api.token": "t0ken", "kept": config["kept"], "missing": config["missing"],
                        "plain": "value"}
    # Task configs the connector built from the resolved values are stored with the variables.
    tasks = [{"connection.password": "s3cret", "task.id": "0"}, {"connection.password": "other"}]
    assert providers(tmp_path).reverse(config, tasks) == [
        {"connection.password": config["connection.password"], "task.id": "0"}, {"connection.password": "other"}]


def test_allowed_paths_and_the_env_allow_list_bound_what_is_read(tmp_path, monkeypatch):
    (tmp_path / "inside").mkdir()
    (tmp_path / "inside" / "a.properties").write_text("k=v\n")
    (tmp_path / "outside.properties").write_text("k=v\n")
    bounded = providers(tmp_path, **{"file.param.allowed.paths": str(tmp_path / "inside"),
                                     "env.param.env.var.names": "ALLOWED_ONE"})
    assert bounded.transform({"a": f"${{file:{tmp_path}/inside/a.properties:k}}"}) == {"a": "v"}
    with pytest.raises(ConfigProviderError, match="not allowed"):
        bounded.transform({"a": f"${{file:{tmp_path}/inside/../outside.properties:k}}"})
    monkeypatch.setenv("ALLOWED_ONE", "yes")
    monkeypatch.setenv("NOT_ALLOWED", "no")
    assert bounded.transform({"a": "${env:ALLOWED_ONE}", "b": "${env:NOT_ALLOWED}"}) == \
        {"a": "yes", "b": "${env:NOT_ALLOWED}"}
    with pytest.raises(ConfigProviderError, match="Could not read properties from file"):
        bounded.transform({"a": f"${{file:{tmp_path}/inside/none.properties:k}}"})
    with pytest.raises(ConfigProviderError, match="is not one of"):
        ConfigProviders({"config.providers": "vault", "config.providers.vault.class": "com.example.Vault"})


def test_a_worker_resolves_a_connectors_secrets_and_shows_only_the_variables(connect_engine, tmp_path, monkeypatch):
    create_topic(connect_engine.bootstrap, "provided-lines", 1)
    source, sink = tmp_path / "in.txt", tmp_path / "out.txt"
    source.write_text("alpha\nbeta\n")
    secrets = tmp_path / "connector.properties"
    secrets.write_text(f"source.file={source}\n")
    monkeypatch.setenv("PROVIDED_TOPIC", "provided-lines")
    file_variable = f"${{file:{secrets}:source.file}}"
    connectors = [{"name": "provided-source", "connector.class": "FileStreamSource", "file": file_variable,
                   "topic": "${env:PROVIDED_TOPIC}"},
                  {"name": "provided-sink", "connector.class": "FileStreamSink", "file": str(sink),
                   "topics": "${env:PROVIDED_TOPIC}"}]
    worker = ConnectWorker(tmp_path, connect_engine.bootstrap, group="", mode="standalone", connectors=connectors,
                           name="providers", settings={
                               "config.providers": "file,env",
                               "config.providers.file.class": FILE, "config.providers.env.class": ENV,
                               "config.providers.file.param.allowed.paths": str(tmp_path)}).start()
    try:
        wait_until(lambda: running(worker, "provided-source") and sink.exists()
                   and sink.read_text() == "alpha\nbeta\n", 60, message="the lines through the resolved configs")
        status, config, _ = request(worker, "GET", "/connectors/provided-source/config")
        assert status == 200 and (config["file"], config["topic"]) == (file_variable, "${env:PROVIDED_TOPIC}")
        status, tasks, _ = request(worker, "GET", "/connectors/provided-source/tasks")
        assert status == 200 and all(str(source) not in str(task["config"]) for task in tasks)
    finally:
        worker.terminate()
