"""The connector API: what a connector written in Python implements, in the shape of Kafka
Connect's Java API (org.apache.kafka.connect.{connector,source,sink}).

A source connector splits its work into task configs; each SourceTask's `poll()` returns
SourceRecords that carry a source partition and a source offset (plain dicts of primitives,
e.g. {"filename": f} and {"position": 42}); the worker writes them to Kafka and, every
`offset.flush.interval.ms`, commits the latest offset of each source partition to the
offsets topic, which the task reads back through `context.offset_storage_reader` when it
starts. A sink connector's SinkTask receives SinkRecords in `put()`; before the worker
commits the consumer offsets it calls `pre_commit()` (by default `flush()`), so what was put
is durable before it is acknowledged: at-least-once delivery, as in Connect.

Schemas are Connect's JSON schema objects (`{"type": "string", "optional": false}`); the
constants below are the common ones. Records without a schema are fine: converters with
schemas disabled ignore them.

Plugins: put a module or package that defines subclasses of SourceConnector or
SinkConnector in a directory listed in the worker's `plugin.path`; the worker imports it at
start and names each connector by its module path and class (`my_plugin.MyConnector`), or
by the class name alone, as Connect's aliases do.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.connect.config_def import ConfigDef, ConfigValue

__all__ = ["ConfigDef", "ConfigValue", "ConnectError", "RetriableError", "DataError", "Connector",
           "SourceConnector", "SinkConnector", "Task", "SourceTask", "SinkTask", "SourceRecord", "SinkRecord",
           "TopicPartition", "STRING_SCHEMA", "OPTIONAL_STRING_SCHEMA", "INT32_SCHEMA", "INT64_SCHEMA",
           "FLOAT64_SCHEMA", "BOOLEAN_SCHEMA", "BYTES_SCHEMA", "OPTIONAL_BYTES_SCHEMA"]

STRING_SCHEMA = {"type": "string", "optional": False}
OPTIONAL_STRING_SCHEMA = {"type": "string", "optional": True}
INT32_SCHEMA = {"type": "int32", "optional": False}
INT64_SCHEMA = {"type": "int64", "optional": False}
FLOAT64_SCHEMA = {"type": "double", "optional": False}
BOOLEAN_SCHEMA = {"type": "boolean", "optional": False}
BYTES_SCHEMA = {"type": "bytes", "optional": False}
OPTIONAL_BYTES_SCHEMA = {"type": "bytes", "optional": True}


class ConnectError(Exception):
    """A connector or task failed; the worker marks it FAILED with the trace."""


class RetriableError(ConnectError):
    """A transient failure: `put()` raising it gets the same records again after a backoff."""


class DataError(ConnectError):
    """A record cannot be converted (Connect's DataException)."""


@dataclass(frozen=True, order=True)
class TopicPartition:
    topic: str
    partition: int


@dataclass
class SourceRecord:
    source_partition: dict | None
    source_offset: dict | None
    topic: str
    partition: int | None = None
    key_schema: dict | None = None
    key: Any = None
    value_schema: dict | None = None
    value: Any = None
    timestamp: int | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


@dataclass
class SinkRecord:
    topic: str
    kafka_partition: int
    key_schema: dict | None
    key: Any
    value_schema: dict | None
    value: Any
    kafka_offset: int
    timestamp: int | None = None
    timestamp_type: str = "CreateTime"
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)


class ConnectorContext:
    """Given to a connector: ask for new task configs, or fail the connector from a thread."""

    def request_task_reconfiguration(self) -> None:  # pragma: no cover - replaced by the worker
        raise NotImplementedError

    def raise_error(self, error: Exception) -> None:  # pragma: no cover - replaced by the worker
        raise NotImplementedError


class Connector:
    """Subclass SourceConnector or SinkConnector, not this."""

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    def version(self) -> str:
        return "unknown"

    def start(self, props: dict[str, str]) -> None:
        raise NotImplementedError

    def task_class(self) -> type["Task"]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        raise NotImplementedError

    def stop(self) -> None:
        pass

    def config(self) -> ConfigDef:
        return ConfigDef()

    def validate(self, props: dict[str, str]) -> dict[str, ConfigValue]:
        """Each key of `config()` checked; override to add checks across keys."""
        return self.config().validate(props)

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict) -> bool:
        """KIP-875: may the offsets be altered or reset (raise ConnectError to refuse)? True
        when the connector checked them; False (the default) lets the worker decide."""
        return False


class SourceConnector(Connector):
    pass


class SinkConnector(Connector):
    pass


class OffsetStorageReader:
    """The committed source offsets of this connector, by source partition."""

    def offset(self, partition: dict) -> dict | None:  # pragma: no cover - replaced by the worker
        raise NotImplementedError

    def offsets(self, partitions: list[dict]) -> list[tuple[dict, dict | None]]:
        return [(p, self.offset(p)) for p in partitions]


class SourceTaskContext:
    def __init__(self, configs: dict[str, str], offset_storage_reader: OffsetStorageReader) -> None:
        self.configs = configs
        self.offset_storage_reader = offset_storage_reader


class SinkTaskContext:
    """Given to a sink task: rewind partitions, ask for a commit, see the assignment."""

    def __init__(self, configs: dict[str, str]) -> None:
        self.configs = configs
        self.requested_offsets: dict[TopicPartition, int] = {}
        self.commit_requested = False
        self.timeout_ms: int | None = None
        self.assigned: set[TopicPartition] = set()

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self.requested_offsets.update(offsets)

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = timeout_ms

    def assignment(self) -> set[TopicPartition]:
        return set(self.assigned)

    def request_commit(self) -> None:
        self.commit_requested = True


class Task:
    def version(self) -> str:
        return "unknown"

    def start(self, props: dict[str, str]) -> None:
        raise NotImplementedError

    def stop(self) -> None:
        pass


class SourceTask(Task):
    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    def poll(self) -> list[SourceRecord] | None:
        """The next records, or None when there are none yet (return within about a second:
        the worker stops a task only between polls)."""
        raise NotImplementedError

    def commit(self) -> None:
        """The offsets of everything polled so far are committed."""

    def commit_record(self, record: SourceRecord, metadata: Any) -> None:
        """`record` was acknowledged by Kafka (metadata: topic, partition, offset)."""


class SinkTask(Task):
    context: SinkTaskContext

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    def open(self, partitions: list[TopicPartition]) -> None:
        pass

    def close(self, partitions: list[TopicPartition]) -> None:
        pass

    def put(self, records: list[SinkRecord]) -> None:
        raise NotImplementedError

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        pass

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Make what was put durable and say which offsets may be committed (next to read)."""
        self.flush(current_offsets)
        return current_offsets
