"""FileStreamSource and FileStreamSink, with Kafka's class names and configs.

- Source (`file`, `topic`, `batch.size`=2000): reads lines (\\n, \\r or \\r\\n) from the file and
  sends each as a string record; its source partition is `{"filename": file}` and its offset
  `{"position": byte position after the line}`, so a restarted task skips what was committed.
  A missing file is waited for. One task, whatever `tasks.max` says (one file, one reader).
- Sink (`file`, `topics`): appends each record's value as a line; `flush()` writes what
  `put()` gathered, in one write, before the worker commits the consumer offsets. A last line
  without its newline (a write cut short when a worker died) is cut off at start: its records
  were not committed and come again.

Without `file`, the source reads standard input and the sink writes standard output, as in
Kafka (no offsets for stdin).
"""
from __future__ import annotations

import logging
import os
import sys
import time

from engine.connect.api import (STRING_SCHEMA, ConnectError, SinkConnector, SinkTask, SourceConnector,
                                SourceRecord, SourceTask)
from engine.connect.config_def import HIGH, INT, LOW, STRING, ConfigDef, non_empty_string

log = logging.getLogger("engine.connect.file")

VERSION = "3.9.0"
FILENAME_FIELD, POSITION_FIELD = "filename", "position"
_CHUNK = 1 << 16


def source_config_def() -> ConfigDef:
    return (ConfigDef()
            .define("file", STRING, None, HIGH, "Source filename. If not specified, the standard input will be used")
            .define("topic", STRING, importance=HIGH, documentation="The topic to publish data to",
                    validator=non_empty_string)
            .define("batch.size", INT, 2000, LOW, "The maximum number of records the source task can read from the "
                                                  "file each time it is polled"))


def sink_config_def() -> ConfigDef:
    return ConfigDef().define("file", STRING, None, HIGH, "Destination filename. If not specified, the standard "
                                                          "output will be used")


class FileStreamSourceConnector(SourceConnector):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        source_config_def().parse(props)
        log.info("Starting file source connector reading from %s", props.get("file") or "standard input")

    def task_class(self):
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]       # only one input stream makes sense

    def config(self) -> ConfigDef:
        return source_config_def()

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict) -> bool:
        if not connector_config.get("file"):
            raise ConnectError("Offsets cannot be modified if the 'file' configuration is unspecified. This is "
                               "because stdin is used for input and offsets are not tracked.")
        for partition, offset in offsets:
            if offset is None:
                continue
            if POSITION_FIELD not in offset:
                raise ConnectError(f"Offset objects should either be null or contain the key '{POSITION_FIELD}'")
            position = offset[POSITION_FIELD]
            if not isinstance(position, int) or isinstance(position, bool):
                raise ConnectError(f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a "
                                   "Long value")
            if position < 0:
                raise ConnectError(f"The value for the '{POSITION_FIELD}' key in the offset should be a "
                                   "non-negative value")
            if partition is None:
                raise ConnectError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise ConnectError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


class FileStreamSourceTask(SourceTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        values = source_config_def().parse(props)
        self.filename = values["file"]
        self.topic = values["topic"]
        self.batch_size = values["batch.size"]
        self.stream = None
        self.buffer = b""
        self.position: int | None = None
        self.stopped = False
        if not self.filename:
            self.stream = sys.stdin.buffer

    def _open(self) -> bool:
        try:
            stream = open(self.filename, "rb")
        except FileNotFoundError:
            log.warning("Couldn't find file %s for FileStreamSourceTask, sleeping to wait for it to be created",
                        self.filename)
            return False
        except OSError as exc:
            raise ConnectError(f"Error while trying to open file {self.filename}: {exc}") from exc
        offset = self.context.offset_storage_reader.offset({FILENAME_FIELD: self.filename})
        position = (offset or {}).get(POSITION_FIELD)
        if position is not None and (not isinstance(position, int) or isinstance(position, bool)):
            stream.close()
            raise ConnectError("Offset position is the incorrect type")
        self.position = position or 0
        stream.seek(self.position)
        if position:
            log.info("Found previous offset, skipped to file offset %d of %s", position, self.filename)
        self.stream = stream
        return True

    def poll(self) -> list[SourceRecord] | None:
        if self.stream is None and not self._open():
            time.sleep(1.0)
            return None
        records: list[SourceRecord] = []
        while len(records) < self.batch_size and not self.stopped:
            line = self._next_line()
            if line is None:
                chunk = self.stream.read1(_CHUNK) if hasattr(self.stream, "read1") else self.stream.read(_CHUNK)
                if not chunk:
                    break
                self.buffer += chunk
                continue
            records.append(SourceRecord({FILENAME_FIELD: self.filename} if self.filename else None,
                                        {POSITION_FIELD: self.position} if self.filename else None,
                                        self.topic, value_schema=STRING_SCHEMA, value=line,
                                        timestamp=int(time.time() * 1000)))
        if not records:
            time.sleep(0.2 if not self.stopped else 0)   # nothing new in the file yet
            return None
        return records

    def _next_line(self) -> str | None:
        buffer = self.buffer
        newline, carriage = buffer.find(b"\n"), buffer.find(b"\r")
        if newline < 0 and carriage < 0:
            return None
        if carriage >= 0 and (newline < 0 or carriage < newline):
            if carriage + 1 >= len(buffer):
                return None        # \r at the end: wait to see whether \n follows
            end, start = carriage, carriage + (2 if buffer[carriage + 1:carriage + 2] == b"\n" else 1)
        else:
            end, start = newline, newline + 1
        line = buffer[:end].decode("utf-8", errors="replace")
        self.buffer = buffer[start:]
        if self.position is not None:
            self.position += start
        return line

    def stop(self) -> None:
        self.stopped = True
        if self.stream is not None and self.filename:
            self.stream.close()


class FileStreamSinkConnector(SinkConnector):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.props = props
        log.info("Starting file sink connector writing to %s", props.get("file") or "standard output")

    def task_class(self):
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def config(self) -> ConfigDef:
        return sink_config_def()

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict) -> bool:
        return True     # nothing kept outside Kafka's consumer offsets


class FileStreamSinkTask(SinkTask):
    def version(self) -> str:
        return VERSION

    def start(self, props: dict[str, str]) -> None:
        self.filename = sink_config_def().parse(props)["file"]
        self.pending: list[str] = []
        if not self.filename:
            self.fd = None
            return
        try:
            self.fd = os.open(self.filename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise ConnectError(f"Couldn't find or create file '{self.filename}' for FileStreamSinkTask") from exc
        _cut_torn_tail(self.filename)

    def put(self, records) -> None:
        self.pending.extend(f"{record.value}\n" for record in records)

    def flush(self, current_offsets) -> None:
        if not self.pending:
            return
        data = "".join(self.pending).encode("utf-8")
        self.pending = []
        if self.fd is None:
            sys.stdout.write(data.decode())
            sys.stdout.flush()
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def stop(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _cut_torn_tail(filename: str) -> None:
    with open(filename, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if size == 0:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        tail = min(size, 1 << 20)
        f.seek(size - tail)
        cut = f.read(tail).rfind(b"\n")
        keep = size - tail + cut + 1 if cut >= 0 else (0 if tail == size else size)
        log.warning("Cutting %d bytes of a torn last line from %s (a write cut short; its records come again)",
                    size - keep, filename)
        f.truncate(keep)
