"""Dynamic group configs (KIP-848, KIP-932): per-group overrides of broker configs, set with
IncrementalAlterConfigs on GROUP resources (type 32) and read with DescribeConfigs.

The overrides live in the cluster metadata (the controller's `config` records with resource
"group", `MetadataImage.group_configs`), so every broker sees the same value; a group without
an override takes the broker config that the group config shadows. Kafka's GroupConfig names
the share group configs below; a value outside the broker's min/max for it is refused with
INVALID_CONFIG and Kafka's wording, as is an unknown name.

    consumer.session.timeout.ms     group.consumer.session.timeout.ms  (min/max session)
    consumer.heartbeat.interval.ms  group.consumer.heartbeat.interval.ms (min/max heartbeat)
    share.session.timeout.ms        group.share.session.timeout.ms     (min/max session)
    share.heartbeat.interval.ms     group.share.heartbeat.interval.ms  (min/max heartbeat)
    share.record.lock.duration.ms   group.share.record.lock.duration.ms (min/max lock)
    share.delivery.count.limit      group.share.delivery.count.limit   (2-10)
    share.partition.max.record.locks group.share.partition.max.record.locks (100-10000)
    share.auto.offset.reset         latest | earliest | by_duration:<ISO-8601 duration>
    share.isolation.level           read_uncommitted | read_committed
"""
from __future__ import annotations

import re
from typing import Any

from engine.config import TYPE_INT, TYPE_STRING, ConfigDef, InvalidConfigError

GROUP_RESOURCE = 32
SOURCE_GROUP = 8              # DescribeConfigs' GROUP_CONFIG source
AUTO_OFFSET_RESET = "share.auto.offset.reset"
ISOLATION_LEVEL = "share.isolation.level"
# ISO-8601 durations as Java's Duration.parse reads them: PnDTnHnMn.nS, days at most.
_DURATION = re.compile(r"^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+(?:\.\d{0,9})?)S)?)?$",
                       re.IGNORECASE)


def _auto_offset_reset(value: str) -> None:
    if value in ("latest", "earliest"):
        return
    if value.startswith("by_duration:") and duration_ms(value.removeprefix("by_duration:")) is not None:
        return
    raise ValueError("must be latest, earliest or by_duration:<ISO-8601 duration>, e.g. by_duration:PT1H")


def _isolation_level(value: str) -> None:
    if value not in ("read_uncommitted", "read_committed"):
        raise ValueError("must be read_uncommitted or read_committed")


# group config -> (its definition, the broker config it shadows, the broker configs bounding it)
GROUP_CONFIGS: dict[str, tuple[ConfigDef, str | None, tuple[str, str] | None]] = {
    "consumer.session.timeout.ms": (ConfigDef("consumer.session.timeout.ms", TYPE_INT, None),
                                    "group.consumer.session.timeout.ms",
                                    ("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms")),
    "consumer.heartbeat.interval.ms": (ConfigDef("consumer.heartbeat.interval.ms", TYPE_INT, None),
                                       "group.consumer.heartbeat.interval.ms",
                                       ("group.consumer.min.heartbeat.interval.ms",
                                        "group.consumer.max.heartbeat.interval.ms")),
    "share.session.timeout.ms": (ConfigDef("share.session.timeout.ms", TYPE_INT, None), "group.share.session.timeout.ms",
                                 ("group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms")),
    "share.heartbeat.interval.ms": (ConfigDef("share.heartbeat.interval.ms", TYPE_INT, None),
                                    "group.share.heartbeat.interval.ms",
                                    ("group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms")),
    "share.record.lock.duration.ms": (ConfigDef("share.record.lock.duration.ms", TYPE_INT, None),
                                      "group.share.record.lock.duration.ms",
                                      ("group.share.min.record.lock.duration.ms",
                                       "group.share.max.record.lock.duration.ms")),
    "share.delivery.count.limit": (ConfigDef("share.delivery.count.limit", TYPE_INT, None),
                                   "group.share.delivery.count.limit", None),
    "share.partition.max.record.locks": (ConfigDef("share.partition.max.record.locks", TYPE_INT, None),
                                         "group.share.partition.max.record.locks", None),
    AUTO_OFFSET_RESET: (ConfigDef(AUTO_OFFSET_RESET, TYPE_STRING, "latest", _auto_offset_reset), None, None),
    ISOLATION_LEVEL: (ConfigDef(ISOLATION_LEVEL, TYPE_STRING, "read_uncommitted", _isolation_level), None, None),
}
_FIXED_RANGES = {"share.delivery.count.limit": (2, 10), "share.partition.max.record.locks": (100, 10000)}


def duration_ms(text: str) -> int | None:
    """An ISO-8601 duration (Java's Duration.parse: PnDTnHnMn.nS) in milliseconds; None if bad."""
    match = _DURATION.match(text.strip())
    if match is None or not any(match.groups()[1:]):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups()[1:])
    total = ((days * 24 + hours) * 60 + minutes) * 60 + seconds
    if match.group(1) == "-":
        total = -total
    return int(round(total * 1000)) if total >= 0 else None


def validate_group_configs(changes: dict[str, Any], broker_config) -> dict[str, Any]:
    """Parse group config changes (None deletes), raising InvalidConfigError as Kafka words it."""
    parsed: dict[str, Any] = {}
    for name, raw in changes.items():
        entry = GROUP_CONFIGS.get(name)
        if entry is None:
            raise InvalidConfigError(f"Unknown group config name: {name}")
        if raw is None:
            parsed[name] = None
            continue
        definition, _, bounds = entry
        value = definition.parse(raw)
        low_high = _FIXED_RANGES.get(name) or (
            (broker_config.get(bounds[0]), broker_config.get(bounds[1])) if bounds else None)
        if low_high is not None and not low_high[0] <= value <= low_high[1]:
            raise InvalidConfigError(f"Invalid value {raw} for configuration {name}: value must be in "
                                     f"[{low_high[0]}, {low_high[1]}]")
        parsed[name] = value
    return parsed


def group_config(image, broker_config, group_id: str, name: str) -> Any:
    """A group config's effective value: the group's override, else the broker config it shadows."""
    overrides = image.group_configs.get(group_id)
    if overrides and name in overrides:
        return overrides[name]
    definition, shadowed, _ = GROUP_CONFIGS[name]
    return broker_config.get(shadowed) if shadowed else definition.default
