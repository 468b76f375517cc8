"""A connector plugin written against engine.connect.api, loaded by the workers from their
plugin.path: a source counting up to `count`, a sink appending values to a file, and
connectors that fail on purpose."""
from engine.connect.api import (INT64_SCHEMA, ConfigDef, ConnectError, SinkConnector, SinkTask, SourceConnector,
                                SourceRecord, SourceTask)
from engine.connect.config_def import HIGH, INT, LOW, PASSWORD, STRING, ConfigError, at_least


class CountingSourceConnector(SourceConnector):
    def version(self):
        return "1.2.3"

    def start(self, props):
        self.props = props

    def task_class(self):
        return CountingSourceTask

    def task_configs(self, max_tasks):
        return [dict(self.props, task_index=str(i)) for i in range(max_tasks)]

    def config(self):
        return (ConfigDef()
                .define("topic", STRING, importance=HIGH, documentation="Topic to write the numbers to")
                .define("count", INT, 10, HIGH, "How many numbers each task writes", validator=at_least(1))
                .define("fail.after", INT, -1, LOW, "Raise after this many numbers (-1: never)"))


class CountingSourceTask(SourceTask):
    def version(self):
        return "1.2.3"

    def start(self, props):
        self.topic, self.count = props["topic"], int(props.get("count", 10))
        self.fail_after = int(props.get("fail.after", -1))
        self.index = props["task_index"]
        committed = self.context.offset_storage_reader.offset({"task": self.index})
        self.next = committed["next"] if committed else 0

    def poll(self):
        if self.fail_after >= 0 and self.next >= self.fail_after:
            raise ConnectError(f"counting task {self.index} gave up at {self.next} on purpose")
        if self.next >= self.count:
            import time
            time.sleep(0.2)
            return None
        records = []
        limit = self.count if self.fail_after < 0 else min(self.count, self.fail_after)
        while self.next < limit and len(records) < 100:
            records.append(SourceRecord({"task": self.index}, {"next": self.next + 1}, self.topic,
                                        value_schema=INT64_SCHEMA, value=self.next))
            self.next += 1
        return records


class CollectingSinkConnector(SinkConnector):
    def start(self, props):
        self.props = props

    def task_class(self):
        return CollectingSinkTask

    def task_configs(self, max_tasks):
        return [dict(self.props) for _ in range(max_tasks)]

    def config(self):
        return ConfigDef().define("file", STRING, importance=HIGH, documentation="Where the values go")


class CollectingSinkTask(SinkTask):
    def start(self, props):
        self.path = props["file"]
        self.buffer = []

    def put(self, records):
        self.buffer += [f"{r.topic}:{r.kafka_partition}:{r.kafka_offset}:{r.value}\n" for r in records]

    def flush(self, offsets):
        with open(self.path, "a") as f:
            f.writelines(self.buffer)
        self.buffer = []


class BrokenStartConnector(SourceConnector):
    def start(self, props):
        raise ConnectError("this connector never starts")

    def task_class(self):
        return CountingSourceTask

    def task_configs(self, max_tasks):
        return []


def _long_enough(name, value):
    if value is not None and len(value) < 8:
        raise ConfigError(name, value, "Password must be at least 8 characters")


def _no_spaces(name, value):
    if value is not None and " " in value:
        raise ConfigError(name, message=f"The password {value} holds a space")


class GuardedSourceConnector(CountingSourceConnector):
    """The counting source with a PASSWORD key its validators check."""

    def config(self):
        return (super().config()
                .define("db.password", PASSWORD, importance=HIGH, documentation="The database's password",
                        validator=_long_enough)
                .define("db.passphrase", PASSWORD, None, LOW, "A second secret", validator=_no_spaces))
