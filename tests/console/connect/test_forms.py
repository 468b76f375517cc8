"""The Connect forms refuse what Connect would not take with a sentence, before any request."""
from __future__ import annotations

import pytest

from console.connect.forms import ConnectorConfigForm, ConnectorJsonForm


@pytest.mark.parametrize("form_class", [ConnectorJsonForm, ConnectorConfigForm])
@pytest.mark.parametrize("document, refusal", [
    ('{"name": "x", ', "This is not JSON: "),
    ('["connector.class"]', "Give a JSON object"),
    ('{"name": "x", "connector.class": "FileStreamSource", "tasks": {"max": 1}}',
     "The value of tasks must be a string, number or boolean."),
])
def test_a_document_that_is_not_a_flat_json_object_is_refused_with_a_sentence(form_class, document, refusal):
    form = form_class({"document": document})
    assert not form.is_valid()
    assert refusal in form.errors["document"][0]


def test_a_connector_document_gives_its_name_and_a_flat_config_of_strings():
    form = ConnectorJsonForm({"document": '{"name": " files ", "config": {"connector.class": "FileStreamSource", '
                                          '"tasks.max": 2, "errors.tolerance.all": true, "topic": null}}'})
    assert form.is_valid(), form.errors
    assert form.connector_name == "files"
    assert form.config == {"connector.class": "FileStreamSource", "tasks.max": "2", "errors.tolerance.all": "true",
                           "topic": ""}


def test_a_config_without_a_connector_class_or_a_connector_without_a_name_is_refused():
    assert "names no \"connector.class\"" in ConnectorConfigForm({"document": '{"tasks.max": 1}'}).errors["document"][0]
    assert "Give the connector a" in ConnectorJsonForm(
        {"document": '{"config": {"connector.class": "X"}}'}).errors["document"][0]
