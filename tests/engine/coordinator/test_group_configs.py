"""Dynamic group configs: names, bounds from the broker's min/max configs, Kafka's wording,
ISO-8601 durations for share.auto.offset.reset=by_duration, and the broker fallback."""
from __future__ import annotations

import pytest

from engine.cluster.metadata import MetadataImage
from engine.config import BrokerConfig, InvalidConfigError
from engine.coordinator.group_configs import duration_ms, group_config, validate_group_configs


def test_values_are_parsed_and_bounded_by_the_broker_configs():
    broker = BrokerConfig(static={"group.share.min.record.lock.duration.ms": "1000"})
    assert validate_group_configs({"share.record.lock.duration.ms": "1500", "share.isolation.level": None},
                                  broker) == {"share.record.lock.duration.ms": 1500, "share.isolation.level": None}
    with pytest.raises(InvalidConfigError, match=r"share.record.lock.duration.ms: value must be in \[1000, 60000\]"):
        validate_group_configs({"share.record.lock.duration.ms": "60001"}, broker)
    with pytest.raises(InvalidConfigError, match="Unknown group config name: share.nope"):
        validate_group_configs({"share.nope": "1"}, broker)
    with pytest.raises(InvalidConfigError, match="by_duration"):
        validate_group_configs({"share.auto.offset.reset": "yesterday"}, broker)
    assert validate_group_configs({"share.auto.offset.reset": "by_duration:PT1H30M"}, broker) == \
        {"share.auto.offset.reset": "by_duration:PT1H30M"}


def test_durations_read_as_java_reads_them():
    assert duration_ms("PT1H") == 3_600_000
    assert duration_ms("P1DT2.5S") == 86_402_500
    assert duration_ms("PT0.001S") == 1
    assert duration_ms("P") is None and duration_ms("1H") is None and duration_ms("-PT1H") is None


def test_a_group_without_an_override_takes_the_broker_config():
    image = MetadataImage(group_configs={"g": {"share.record.lock.duration.ms": 2000}})
    broker = BrokerConfig(static={"group.share.record.lock.duration.ms": "40000"})
    assert group_config(image, broker, "g", "share.record.lock.duration.ms") == 2000
    assert group_config(image, broker, "other", "share.record.lock.duration.ms") == 40000
    assert group_config(image, broker, "other", "share.auto.offset.reset") == "latest"
