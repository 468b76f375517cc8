"""Each deserializer round-trips through its serializer; bad bytes come back as hex with the error."""
import base64
import json
import struct

import pytest
from google.protobuf import descriptor_pb2

from console.errors import InvalidInput
from console.messages.deserializers import Deserializers, protobuf_message_types
from console.messages.serializers import serialize

AVRO = json.dumps({"type": "record", "name": "Order", "fields": [
    {"name": "id", "type": "long"}, {"name": "item", "type": "string"}, {"name": "price", "type": "double"}]})
ORDER = {"id": 7, "item": "<script>alert(1)</script>", "price": 9.5}


def descriptor_set() -> bytes:
    """A FileDescriptorSet for `shop.Order {int64 id = 1; string item = 2; repeated string tags = 3;}`."""
    file = descriptor_pb2.FileDescriptorProto(name="shop.proto", package="shop", syntax="proto3")
    message = file.message_type.add(name="Order")
    F = descriptor_pb2.FieldDescriptorProto
    message.field.add(name="id", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    message.field.add(name="item", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    message.field.add(name="tags", number=3, type=F.TYPE_STRING, label=F.LABEL_REPEATED)
    return descriptor_pb2.FileDescriptorSet(file=[file]).SerializeToString()


def test_auto_picks_json_then_text_then_hex():
    d = Deserializers()
    assert d.decode(b'{"a": 1}', "auto").format == "json"
    assert d.decode("héllo".encode(), "auto").text == "héllo"
    assert d.decode(b"\xff\x00", "auto").text == "ff00"
    assert d.decode(None, "auto").text is None


def test_json_round_trip_pretty_prints():
    raw = serialize('{"b": [1, 2], "a": "x"}', "json", what="value")
    decoded = Deserializers().decode(raw, "json")
    assert json.loads(decoded.text) == {"b": [1, 2], "a": "x"} and "\n" in decoded.text


def test_bad_json_is_refused_on_produce():
    with pytest.raises(InvalidInput, match="not valid JSON"):
        serialize("{nope", "json", what="value")


def test_avro_plain_round_trip():
    raw = serialize(json.dumps(ORDER), "avro", what="value", avro_schema=AVRO)
    assert json.loads(Deserializers(avro_schema=AVRO).decode(raw, "avro").text) == ORDER


def test_avro_confluent_framing_resolves_the_registered_schema():
    raw = serialize(json.dumps(ORDER), "avro", what="value", registered_schema=(42, AVRO))
    assert raw[0] == 0 and struct.unpack(">I", raw[1:5]) == (42,)
    decoded = Deserializers(registered_schemas={42: AVRO}).decode(raw, "avro")
    assert decoded.error is None and json.loads(decoded.text) == ORDER
    unknown = Deserializers(registered_schemas={}).decode(raw, "avro")
    assert unknown.text == raw.hex() and "not registered" in unknown.error


def test_protobuf_round_trip_and_message_types():
    fds = descriptor_set()
    assert protobuf_message_types(fds) == ["shop.Order"]
    raw = serialize('{"id": 5, "item": "pen", "tags": ["a", "b"]}', "protobuf", what="value",
                    protobuf_descriptor_set=fds, protobuf_message_type="shop.Order")
    decoded = Deserializers(protobuf_descriptor_set=fds, protobuf_message_type="shop.Order").decode(raw, "protobuf")
    assert json.loads(decoded.text) == {"id": "5", "item": "pen", "tags": ["a", "b"]}   # int64 as a string: proto3 JSON


def test_msgpack_round_trip():
    raw = serialize('{"n": 1, "list": [true, null, "x"]}', "msgpack", what="value")
    assert json.loads(Deserializers().decode(raw, "msgpack").text) == {"n": 1, "list": [True, None, "x"]}


def test_hex_and_base64():
    d = Deserializers()
    assert d.decode(b"\x01\xab", "hex").text == "01ab"
    assert base64.b64decode(d.decode(b"\x01\xab", "base64").text) == b"\x01\xab"


@pytest.mark.parametrize("fmt", ["json", "avro", "protobuf", "msgpack", "string"])
def test_undecodable_bytes_are_hex_with_the_error(fmt):
    decoded = Deserializers(avro_schema=AVRO, protobuf_descriptor_set=descriptor_set(),
                            protobuf_message_type="shop.Order").decode(b"\xff\xfe\x00garbage\x80", fmt)
    assert decoded.text == b"\xff\xfe\x00garbage\x80".hex()
    assert decoded.error and decoded.format == "hex"


def test_protobuf_in_confluent_framing_reads_with_the_topics_type():
    fds = descriptor_set()
    plain = serialize('{"id": 9, "item": "cup"}', "protobuf", what="value", protobuf_descriptor_set=fds,
                      protobuf_message_type="shop.Order")
    d = Deserializers(protobuf_descriptor_set=fds, protobuf_message_type="shop.Order")
    for indexes in (b"\x00", b"\x02\x00"):          # [0] in short form, and [0] spelled out
        decoded = d.decode(b"\x00" + struct.pack(">I", 3) + indexes + plain, "protobuf")
        assert decoded.error is None and json.loads(decoded.text) == {"id": "9", "item": "cup"}


def test_auto_recognises_confluent_framing_and_says_so():
    framed = struct.pack(">bI", 0, 42) + serialize(json.dumps(ORDER), "avro", what="value", avro_schema=AVRO)
    known = Deserializers(registered_schemas={42: AVRO}, subjects={42: "orders-value"}).decode(framed, "auto")
    assert json.loads(known.text) == ORDER and known.format == "avro"
    assert known.note == "Confluent wire format, schema id 42 (orders-value), read as Avro"
    # An id nobody knows: not taken for the framing (any binary value may start with a zero byte),
    # read as the next decoder reads it, with a muted note and no error.
    unknown = Deserializers().decode(framed, "auto")
    assert unknown.format == "hex" and unknown.text == framed.hex() and unknown.error is None
    assert unknown.schema_id is None and "schema id 42" in unknown.note and "no schema registered" in unknown.note


@pytest.mark.parametrize("key", [b"\x01", b"\x00\x02", b"\x7f", b"ab\x03"])
def test_auto_shows_binary_keys_as_hex_never_as_a_lone_glyph(key):
    decoded = Deserializers().decode(key, "auto")
    assert (decoded.format, decoded.text) == ("hex", key.hex())


def test_a_decoder_is_one_registered_method():
    from console.messages.deserializers import DECODERS
    from console.messages.models import FORMATS
    assert set(FORMATS) == set(DECODERS)
    assert Deserializers().decode(b"x", "nope").error == "Unknown format 'nope'."


# --- values that only look framed -----------------------------------------------------------------

def _refusing_registry(calls: list):
    """A registry lookup that records its ids and answers as a registry that is not there."""
    from console.schema_registry.client import RegistryUnreachable

    def lookup(schema_id: int):
        calls.append(schema_id)
        raise RegistryUnreachable("The schema registry at http://registry.invalid does not answer (ConnectionError).")
    return lookup


@pytest.mark.parametrize("head", [b"\x00\x00\x00\x00\x00", b"\x00\x80\x00\x00\x00", b"\x00\xff\xff\xff\xff"])
def test_an_id_no_schema_can_have_is_not_taken_for_the_framing(head):
    """0, or past a Java int: no registry hands out such an id, so it is not even asked."""
    calls: list = []
    decoded = Deserializers(registry=_refusing_registry(calls)).decode(head + b"\x01\x02", "auto")
    assert calls == [] and decoded.format == "hex" and decoded.error is None and decoded.schema_id is None


def test_a_registry_that_does_not_answer_leaves_binary_values_unframed_and_says_so_once():
    calls: list = []
    d = Deserializers(registry=_refusing_registry(calls))
    values = [bytes([0, i, 2, 3, 4]) + bytes(range(40)) for i in range(1, 4)]
    decoded = [d.decode(v, "auto") for v in values]
    assert [(x.format, x.error, x.schema_id) for x in decoded] == [("hex", None, None)] * 3
    assert "may be in Confluent's wire format (schema id 16909060)" in decoded[0].note
    assert d.registry_failure == "The schema registry at http://registry.invalid does not answer (ConnectionError)."
    # Chosen explicitly, the framing is taken at its word: the failure is the record's error.
    explicit = d.decode(values[0], "avro")
    assert explicit.error and "does not answer" in explicit.error and explicit.schema_id == 16909060


def test_hex_is_shown_in_byte_pairs_sixteen_to_a_line():
    decoded = Deserializers().decode(bytes(range(20)), "hex")
    assert decoded.text == bytes(range(20)).hex()                    # exports and copies: one run
    assert decoded.display == ("00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f\n10 11 12 13")
    assert Deserializers().decode(b"ab", "auto").display == "ab"      # text as it is
