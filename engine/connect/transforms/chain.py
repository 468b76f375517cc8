"""A connector's transforms (KIP-66) and predicates (KIP-585), configured from its config and
applied in order to each record of a task.

A source record is transformed after `poll()` and before the converters; a sink record after
the converters and before `put()`. A transform that returns None drops the record: a source
record is not sent (its offset is still committed), a sink record is not put (its offset is
committed as consumed). A transform that fails fails the task, or with `errors.tolerance=all`
drops the record and logs it (the tasks decide which: engine/connect/source_task.py and
sink_task.py).

A config Connect would refuse is a TransformConfigError: an alias without a `type`, a class this
worker does not have (registry.lookup lists those it has), a transform's `predicate` not among
the `predicates`, a class's refusal of its own keys (a transform's names its alias).
"""
from __future__ import annotations

import dataclasses

from engine.connect.transforms.base import Transform, TransformConfigError, TransformError, props_list
from engine.connect.transforms.predicates import Predicate
from engine.connect.transforms.registry import PREDICATES, PREDICATES_PACKAGE, TRANSFORMS, TRANSFORMS_PACKAGE, lookup


def _scoped(props: dict[str, str], prefix: str) -> dict[str, str]:
    return {k[len(prefix):]: v for k, v in props.items() if k.startswith(prefix)}


@dataclasses.dataclass
class _Stage:
    alias: str
    class_name: str
    transform: Transform
    predicate: Predicate | None
    negate: bool


class TransformationChain:
    """A connector's transforms, configured from its config; `apply(record)` runs them in order."""

    def __init__(self, props: dict[str, str]) -> None:
        predicates = {}
        for alias in props_list(props, "predicates"):
            scoped = _scoped(props, f"predicates.{alias}.")
            if not scoped.get("type"):
                raise TransformConfigError(f"Predicate {alias}: predicates.{alias}.type is not set")
            predicate = lookup(PREDICATES, PREDICATES_PACKAGE, scoped["type"], "predicates")
            predicate.configure(scoped)
            predicates[alias] = predicate
        self.stages: list[_Stage] = []
        for alias in props_list(props, "transforms"):
            scoped = _scoped(props, f"transforms.{alias}.")
            if not scoped.get("type"):
                raise TransformConfigError(f"Transform {alias}: transforms.{alias}.type is not set")
            transform = lookup(TRANSFORMS, TRANSFORMS_PACKAGE, scoped["type"], "transforms")
            try:
                transform.configure(scoped)
            except TransformConfigError as exc:
                raise TransformConfigError(f"Transform {alias}: {exc}") from None
            predicate_alias = (scoped.get("predicate") or "").strip()
            if predicate_alias and predicate_alias not in predicates:
                raise TransformConfigError(f"Transform {alias}: predicate {predicate_alias} is not among the "
                                           "predicates")
            short = scoped["type"].strip().removeprefix(TRANSFORMS_PACKAGE)
            self.stages.append(_Stage(alias, TRANSFORMS_PACKAGE + short, transform, predicates.get(predicate_alias),
                                      str(scoped.get("negate", "false")).strip().lower() == "true"))

    def __bool__(self) -> bool:
        return bool(self.stages)

    def apply(self, record):
        """The transformed record, or None once a transform drops it. ConnectError names the
        transform that failed."""
        for stage in self.stages:
            if stage.predicate is not None and stage.predicate.test(record) == stage.negate:
                continue
            try:
                record = stage.transform.apply(record)
            except Exception as exc:
                raise TransformError(f"Transform {stage.alias} failed: {exc}", stage.class_name) from exc
            if record is None:
                return None
        return record
