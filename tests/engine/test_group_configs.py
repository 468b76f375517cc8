"""A group's own configs in the controller: Kafka's names and sentences, kept in the metadata
journal and in its snapshot, gone when the last one is deleted."""
import kafka.errors as Errors
import pytest

from engine.cluster.controller import Controller
from engine.config import BrokerConfig
from engine.errors import ApiError


def test_group_configs_are_validated_journaled_and_snapshotted(tmp_path):
    controller = Controller(tmp_path, BrokerConfig())
    controller.alter_group_configs("app", {"consumer.session.timeout.ms": "20000"})
    controller.alter_group_configs("other", {"consumer.heartbeat.interval.ms": "1500"}, validate_only=True)
    for changes, message in (({"retention.ms": "1"}, "Unknown group config name: retention.ms"),
                             ({"consumer.session.timeout.ms": "0"},
                              "Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1"),
                             ({"consumer.session.timeout.ms": "soon"},
                              "Invalid value soon for configuration consumer.session.timeout.ms: "
                              "Not a number of type INT")):
        with pytest.raises(ApiError) as refused:
            controller.alter_group_configs("app", changes)
        assert (refused.value.code, refused.value.message) == (Errors.InvalidConfigurationError.errno, message)
    controller._journal.close()

    replayed = Controller(tmp_path, BrokerConfig())          # from the journal
    assert replayed.image.group_configs == {"app": {"consumer.session.timeout.ms": 20000}}
    replayed.alter_group_configs("app", {"consumer.heartbeat.interval.ms": "1500"})
    replayed.shutdown()
    reopened = Controller(tmp_path, BrokerConfig())          # from the snapshot
    assert reopened.image.group_configs == {"app": {"consumer.session.timeout.ms": 20000,
                                                    "consumer.heartbeat.interval.ms": 1500}}
    reopened.alter_group_configs("app", {"consumer.session.timeout.ms": None, "consumer.heartbeat.interval.ms": None})
    assert reopened.image.group_configs == {}
    reopened.shutdown()
