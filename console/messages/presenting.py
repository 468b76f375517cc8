"""Records as a page, a JSON answer, a websocket event or an export row show them.

`Presenter` decodes key, value and header values with the topic's deserializers and, for a
viewer, applies the topic's masking rules. Values of 1 MB or more are previewed: only the
first PREVIEW_BYTES are decoded, and the record view offers the raw bytes as a download.
All text here is plain data; templates autoescape it and the JavaScript writes it with
textContent, never as HTML.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime

from console.kafka_gateway.batches import CODEC_NAMES, TIMESTAMP_TYPES, ConsumedRecord
from console.messages.deserializers import Decoded, Deserializers
from console.messages.filters import ParsedValue
from console.errors import ConsoleError
from console.messages.masking import FIELD_FORMATS, WITHHELD, Masker, mask_decoded

LARGE_VALUE_BYTES = 1 << 20
PREVIEW_BYTES = 64 << 10
TABLE_PREVIEW_CHARS = 200
TABLE_PREVIEW_HEX_BYTES = 32      # two lines of 16 byte pairs


@dataclass(frozen=True)
class MessageView:
    partition: int
    offset: int
    timestamp: int
    timestamp_iso: str
    timestamp_type: str
    key: Decoded
    value: Decoded
    headers: tuple[tuple[str, Decoded], ...]
    size: int
    value_size: int | None
    key_size: int | None             # None: a null key
    value_truncated: bool            # the value is 1 MB or more: `value` decodes its first PREVIEW_BYTES only
    compression: str
    masked: bool
    transaction: str = ""            # read_uncommitted: committed | aborted | open | unknown ("" outside one)
    control: str = ""                # a transaction marker's row: COMMIT or ABORT
    producer_id: int = -1
    undecodable: str = ""            # a row for records that could not be decoded: why, with their offsets

    @property
    def value_preview(self) -> str:
        """The value as a table row shows it: its start, hex in byte pairs (Decoded.display)."""
        text = self.value.text
        if text is None:
            return ""
        if self.value.format == "hex":
            shown = Decoded(text[:TABLE_PREVIEW_HEX_BYTES * 2], "hex").display
            return shown if len(text) <= TABLE_PREVIEW_HEX_BYTES * 2 else shown + " …"
        return text if len(text) <= TABLE_PREVIEW_CHARS else text[:TABLE_PREVIEW_CHARS] + "…"

    def as_dict(self, *, preview: bool = False) -> dict:
        return {"partition": self.partition, "offset": self.offset, "timestamp": self.timestamp,
                "timestamp_iso": self.timestamp_iso, "timestamp_type": self.timestamp_type,
                "key": _decoded(self.key), "value": _decoded(self.value, preview=preview),
                "headers": [{"name": n, **_decoded(d)} for n, d in self.headers],
                "size": self.size, "key_size": self.key_size, "value_size": self.value_size,
                "value_truncated": self.value_truncated,
                "compression": self.compression, "masked": self.masked, "transaction": self.transaction,
                "control": self.control, "producer_id": self.producer_id, "undecodable": self.undecodable}


def _decoded(d: Decoded, *, preview: bool = False) -> dict:
    text = d.text
    if preview and text is not None and len(text) > TABLE_PREVIEW_CHARS:
        text = text[:TABLE_PREVIEW_CHARS] + "…"
    found = {"text": text, "format": d.format, "error": d.error, "note": d.note}
    if d.schema_id is not None:
        found.update(schema_id=d.schema_id, subject=d.subject)
    return found


def iso_time(ms: int) -> str:
    if ms is None or ms < 0:
        return ""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# Formats that show a value's bytes as they are; a masked reader gets them from the masked text.
RAW_FORMATS = ("hex", "base64")


class Withheld(ConsoleError):
    """A masked reader asked for a value that masking rules cannot be applied to."""


class Presenter:
    """Decodes records for one reader. With a `masker` (the viewer role), values and header
    values are decoded, masked, and only then rendered (see masking): a raw format (hex,
    base64) shows the masked text's bytes, read with the topic's own decoder (`read_formats`)."""

    def __init__(self, *, deserializers: Deserializers, key_format: str, value_format: str, header_format: str,
                 masker: Masker | None = None, key_deserializers: Deserializers | None = None,
                 read_formats: tuple[str, str, str] = ("auto", "auto", "auto")) -> None:
        self._d = deserializers
        self._keys = key_deserializers or deserializers     # keys may have an Avro schema of their own
        self._formats = (key_format, value_format, header_format)
        self._masker = masker if masker else None
        self._read_formats = tuple("auto" if f in RAW_FORMATS else f for f in read_formats)

    @property
    def masks(self) -> bool:
        return self._masker is not None

    @property
    def registry_failure(self) -> str:
        """The schema registry's failure while these records were decoded ("" when none), for
        the page to say once: each record only notes that it could not be asked."""
        return self._d.registry_failure or self._keys.registry_failure

    @property
    def decodes_framed_values(self) -> bool:
        """The value format reads Confluent's framing into JSON: avro, protobuf, or auto when
        schema ids can be resolved (a registry, or schemas registered in the console)."""
        fmt = self._formats[1]
        return fmt in ("avro", "protobuf") or (fmt == "auto" and self._d.resolves_schema_ids)

    def present(self, record: ConsumedRecord) -> MessageView:
        if record.undecodable:
            return _undecodable(record, masked=self.masks)
        key_format, value_format, header_format = self._formats
        value = record.value
        truncated = value is not None and len(value) >= LARGE_VALUE_BYTES
        if self._masker is not None:
            decoded = self._masked(value, value_format, self._read_formats[1])
            if truncated and decoded.text:
                decoded = Decoded(decoded.text[:PREVIEW_BYTES], f"{decoded.format} (preview)", decoded.error,
                                  decoded.note)
        elif truncated:
            decoded = Decoded(value[:PREVIEW_BYTES].decode("utf-8", errors="replace"), "string (preview)")
        else:
            decoded = self._d.decode(value, value_format)
        headers = tuple((name, self._header(v)) for name, v in record.headers)
        return MessageView(partition=record.partition, offset=record.offset, timestamp=record.timestamp,
                           timestamp_iso=iso_time(record.timestamp),
                           timestamp_type=TIMESTAMP_TYPES.get(record.timestamp_type, "CreateTime"),
                           key=self._keys.decode(record.key, key_format), value=decoded, headers=headers,
                           size=record.size, value_size=None if value is None else len(value),
                           key_size=None if record.key is None else len(record.key), value_truncated=truncated,
                           compression=CODEC_NAMES.get(record.codec, "?"),
                           masked=self.masks, transaction=record.transaction, control=record.control,
                           producer_id=record.producer_id)

    def _header(self, data: bytes | None) -> Decoded:
        if self._masker is not None:
            return self._masked(data, self._formats[2], self._read_formats[2])
        return self._d.decode(data, self._formats[2])

    def _masked(self, data: bytes | None, fmt: str, read_format: str) -> Decoded:
        """Decode (with the topic's decoder when `fmt` is a raw format), mask, then render."""
        if data is None:
            return Decoded(None, fmt)
        masked = mask_decoded(self._d.decode(data, read_format if fmt in RAW_FORMATS else fmt), self._masker)
        if fmt not in RAW_FORMATS or masked.format == WITHHELD:
            return masked
        text = masked.text.encode("utf-8")
        return Decoded(text.hex() if fmt == "hex" else base64.b64encode(text).decode(), fmt,
                       note=f"{fmt} of the masked {masked.format} text, not of the record's bytes")

    def _masked_text(self, data: bytes | None, fmt: str, read_format: str) -> bytes | None:
        decoded = self._masked(data, read_format if fmt in RAW_FORMATS else fmt, read_format)
        return None if decoded.text is None or decoded.format == WITHHELD else decoded.text.encode("utf-8")

    def compared_value(self, data: bytes | None) -> bytes | None:
        """What a masked reader's search compares for a value: the masked text (None: withheld)."""
        return self._masked_text(data, self._formats[1], self._read_formats[1])

    def decoded_value(self, data: bytes | None):
        """What a search compares for a value in Confluent's framing (magic byte 0, schema id):
        the value decoded through the registry (a ParsedValue: JSON-path filters read it as it
        is, text filters its JSON), else the value as shown. Other values are compared as they
        are, byte for byte."""
        if data is None or data[:1] != b"\x00" or len(data) < 6:
            return data
        if self._d.resolves_through_registry:
            try:
                return ParsedValue(self._d.framed_value(data))
            except Exception:  # noqa: BLE001 - not decodable: compared as the page shows it
                pass
        decoded = self._d.decode(data, self._formats[1])
        if decoded.error or decoded.text is None or decoded.format == "hex":   # not decoded: not framed after all
            return data
        return decoded.text.encode("utf-8")

    def compared_header(self, data: bytes | None) -> bytes | None:
        return self._masked_text(data, self._formats[2], self._read_formats[2])

    def raw_value(self, record: ConsumedRecord) -> tuple[bytes, str]:
        """The value for a download and its file suffix: the record's bytes, or for a masked
        reader the masked text (Withheld when the rules cannot be applied to the value)."""
        if self._masker is None:
            return record.value or b"", "bin"
        fmt, read_format = self._formats[1], self._read_formats[1]
        decoded = self._masked(record.value, read_format if fmt in RAW_FORMATS else fmt, read_format)
        if decoded.text is None:
            return b"", "bin"
        if decoded.format == WITHHELD:
            raise Withheld(decoded.error)
        return decoded.text.encode("utf-8"), "masked.json" if decoded.format in FIELD_FORMATS else "masked.txt"


def _undecodable(record: ConsumedRecord, *, masked: bool) -> MessageView:
    """A row saying that the records from its offset could not be decoded, and why: no bytes."""
    nothing = Decoded(None, "undecodable", record.undecodable)
    return MessageView(partition=record.partition, offset=record.offset, timestamp=record.timestamp,
                       timestamp_iso=iso_time(record.timestamp), timestamp_type="", key=nothing, value=nothing,
                       headers=(), size=0, value_size=None, key_size=None, value_truncated=False,
                       compression=CODEC_NAMES.get(record.codec, "?"), masked=masked, undecodable=record.undecodable)


def export_row(record: ConsumedRecord, view: MessageView) -> dict:
    """One export line: the decoded (and, for a viewer, masked) text, its transaction's outcome
    (read_uncommitted; "" outside one), and the raw bytes as base64 unless masking applies (the
    raw bytes would show what the mask hides)."""
    row = {"partition": record.partition, "offset": record.offset, "timestamp": record.timestamp,
           "timestamp_type": view.timestamp_type, "key": view.key.text, "value": view.value.text,
           "headers": {n: d.text for n, d in view.headers}, "transaction": view.transaction,
           "value_schema_id": view.value.schema_id, "value_subject": view.value.subject or None}
    if not view.masked:
        row["key_base64"] = None if record.key is None else base64.b64encode(record.key).decode()
        row["value_base64"] = None if record.value is None else base64.b64encode(record.value).decode()
        row["headers_base64"] = [[n, None if v is None else base64.b64encode(v).decode()] for n, v in record.headers]
    return row
