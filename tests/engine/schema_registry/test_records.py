"""`_schemas` records are byte-for-byte Confluent's: compaction keys on the exact key bytes."""
from __future__ import annotations

import json

from engine.schema_registry import records
from engine.schema_registry.store import Store


def test_keys_are_jacksons_bytes():
    assert records.schema_key("orders-value", 3) == b'{"keytype":"SCHEMA","subject":"orders-value","version":3,"magic":1}'
    assert records.config_key(None) == b'{"keytype":"CONFIG","subject":null,"magic":0}'
    assert records.config_key("s") == b'{"keytype":"CONFIG","subject":"s","magic":0}'
    assert records.mode_key("s") == b'{"keytype":"MODE","subject":"s","magic":0}'
    assert records.delete_subject_key("s") == b'{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}'
    assert records.noop_key() == b'{"keytype":"NOOP","magic":0}'


def test_schema_values_leave_out_avro_type_and_empty_references():
    avro = json.loads(records.schema_value(subject="s", version=1, schema_id=7, schema_type="AVRO", references=[],
                                           schema='"int"', deleted=False))
    assert avro == {"subject": "s", "version": 1, "id": 7, "schema": '"int"', "deleted": False}
    proto = json.loads(records.schema_value(subject="s", version=2, schema_id=8, schema_type="PROTOBUF",
                                            references=[{"name": "a.proto", "subject": "a", "version": 1}],
                                            schema="syntax = \"proto3\";", deleted=True))
    assert proto["schemaType"] == "PROTOBUF" and proto["references"][0]["name"] == "a.proto"


def test_a_store_built_from_confluent_records(tmp_path):
    """Records as Confluent's registry writes them (keys, values, tombstones, soft deletes)."""
    store = Store()
    written = [
        (b'{"keytype":"NOOP","magic":0}', None),
        (b'{"keytype":"SCHEMA","subject":"a","version":1,"magic":1}',
         b'{"subject":"a","version":1,"id":1,"schema":"\\"string\\"","deleted":false}'),
        (b'{"keytype":"SCHEMA","subject":"b","version":1,"magic":1}',
         b'{"subject":"b","version":1,"id":1,"schema":"\\"string\\"","deleted":false}'),
        (b'{"keytype":"SCHEMA","subject":"a","version":2,"magic":1}',
         b'{"subject":"a","version":2,"id":2,"schema":"\\"long\\"","deleted":false}'),
        (b'{"keytype":"CONFIG","subject":"a","magic":0}', b'{"compatibilityLevel":"FULL"}'),
        (b'{"keytype":"DELETE_SUBJECT","subject":"b","magic":0}', b'{"subject":"b","version":1}'),
        (b'{"keytype":"SCHEMA","subject":"a","version":2,"magic":1}', None),
        (b'not json', b'{}'),
    ]
    for offset, (key, value) in enumerate(written):
        try:
            store.apply(records.decode(offset, key, value))
        except records.UnreadableRecord:
            store.skipped += 1
    assert [v.version for v in store.versions("a")] == [1]
    assert store.versions("b") == [] and [v.version for v in store.versions("b", include_deleted=True)] == [1]
    assert store.subject_names() == ["a"] and store.subject_names(include_deleted=True) == ["a", "b"]
    assert store.level("a") == "FULL" and store.max_id == 2 and store.skipped == 1
    assert store.schemas[1].users == {("a", 1), ("b", 1)}
