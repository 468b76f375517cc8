"""kafka-reassign-partitions.sh JSON (v1): round trip, and a readable error for each mistake."""
import json

import pytest

from console.errors import InvalidInput
from console.reassignments.plan_json import export_json, import_json, parse_replica_list


def test_round_trip_in_kafkas_format():
    assignment = {("orders", 1): (3, 1, 2), ("orders", 0): (1, 2, 3)}
    text = export_json(assignment)
    assert json.loads(text) == {"version": 1, "partitions": [
        {"topic": "orders", "partition": 0, "replicas": [1, 2, 3], "log_dirs": ["any", "any", "any"]},
        {"topic": "orders", "partition": 1, "replicas": [3, 1, 2], "log_dirs": ["any", "any", "any"]}]}
    assert import_json(text) == assignment


def test_the_tools_own_output_without_log_dirs_is_read():
    assert import_json('{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[2,1]}]}') == {
        ("t", 0): (2, 1)}


@pytest.mark.parametrize("text, message", [
    ("{", "Not valid JSON"),
    ('{"version": 2, "partitions": []}', "version"),
    ('{"version": 1, "partitions": []}', "non-empty"),
    ('{"version": 1, "partitions": [{"topic": "", "partition": 0, "replicas": [1]}]}', "topic"),
    ('{"version": 1, "partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}', "partition"),
    ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": []}]}', "non-empty list"),
    ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}', "twice"),
    ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [true]}]}', "broker ids"),
    ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1], "log_dirs": ["/d"]}]}',
     "log_dirs"),
    ('{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]},'
     ' {"topic": "t", "partition": 0, "replicas": [2]}]}', "listed twice"),
])
def test_mistakes_are_named(text, message):
    with pytest.raises(InvalidInput, match=message):
        import_json(text)


def test_manual_replica_list():
    assert parse_replica_list(" 3, 1,2 ", where="t-0", brokers=[1, 2, 3]) == (3, 1, 2)
    with pytest.raises(InvalidInput, match="unknown broker"):
        parse_replica_list("1,9", where="t-0", brokers=[1, 2, 3])
    with pytest.raises(InvalidInput, match="comma-separated"):
        parse_replica_list("1;2", where="t-0")
