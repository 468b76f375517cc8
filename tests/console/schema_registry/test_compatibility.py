"""The registry's verbose compatibility messages read out: Avro's single-quoted notation (its
description quoting inside its quotes), Protobuf's and JSON Schema's double quotes, the version
checked against, the level (Confluent 7's validateFields form too), lines in no known notation."""
from __future__ import annotations

from console.schema_registry.compatibility import parse_problem, parse_verdict, words_for

AVRO = ("{errorType:'READER_FIELD_MISSING_DEFAULT_VALUE', description:'The field 'total' at path '/fields/2' in the "
        "new schema has no default value and is missing in the old schema', additionalInfo:'total'}")


def test_an_avro_problem_reads_as_words_a_field_and_a_description():
    problem = parse_problem(AVRO)
    assert (problem.error_type, problem.words, problem.field, problem.path) == \
        ("READER_FIELD_MISSING_DEFAULT_VALUE", "A field without a default value", "total", "/fields/2")
    assert problem.description == ("The field 'total' at path '/fields/2' in the new schema has no default value "
                                   "and is missing in the old schema")


def test_protobuf_and_json_schema_problems_name_their_path():
    proto = parse_problem('{errorType:"FIELD_KIND_CHANGED", description:"The type of a field at path \'#/Order/2\' '
                          'in the new schema does not match the old schema"}')
    assert (proto.words, proto.path, proto.field) == ("A field's kind changed", "#/Order/2", "")
    confluent_json = parse_problem('{errorType:"TYPE_CHANGED", description:"Found incompatible change: '
                                   'Difference{jsonPath=\'#/properties/total\', type=TYPE_CHANGED}"}')
    ours = parse_problem('{errorType:"TYPE_CHANGED", description:"Found incompatible change: TYPE_CHANGED at '
                         '#/properties/total"}')
    assert confluent_json.path == ours.path == "#/properties/total"
    assert words_for("SOME_NEW_KIND") == "Some new kind"


def test_the_verdict_keeps_version_level_and_raw_lines():
    lines = [AVRO, "{oldSchemaVersion: 3}", "{oldSchema: '{\"type\":\"record\",\"name\":\"Order\"}'}",
             "{validateFields: 'false', compatibility: 'BACKWARD_TRANSITIVE'}",
             "Incompatible because of different schema type"]
    verdict = parse_verdict({"is_compatible": False, "messages": lines})
    assert not verdict.is_compatible and [p.field for p in verdict.problems] == ["total"]
    assert (verdict.old_version, verdict.level, verdict.old_schema) == \
        (3, "BACKWARD_TRANSITIVE", '{"type":"record","name":"Order"}')
    assert verdict.notes == ["Incompatible because of different schema type"] and verdict.raw == lines
    assert parse_verdict({"is_compatible": True, "messages": []}).problems == []
