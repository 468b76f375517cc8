"""The built-in transform and predicate classes by their names, and Connect's enriched ConfigDef
for a connector's aliases (enrich), which validation answers from.

Class names are Kafka's (`org.apache.kafka.connect.transforms.RegexRouter`,
`org.apache.kafka.connect.transforms.predicates.TopicNameMatches`); the simple name
(`RegexRouter`, `MaskField$Value`) is an alias, as Connect's plugin aliases are. A name that is
neither is refused with the list of this worker's classes.

Built in: InsertField, ReplaceField, MaskField, ExtractField, HoistField, Flatten, Cast,
TimestampConverter, SetSchemaMetadata, HeaderFrom (each `$Key` and `$Value`), ValueToKey,
RegexRouter, TimestampRouter, Filter, InsertHeader, DropHeaders; the predicates
TopicNameMatches, HasHeaderKey and RecordIsTombstone. Not built in: custom transform and
predicate classes.
"""
from __future__ import annotations

from typing import Callable

from engine.connect.config_def import BOOLEAN, LOW, MEDIUM, STRING, ConfigDef
from engine.connect.transforms.base import Transform, TransformConfigError, props_list
from engine.connect.transforms.fields import (Cast, ExtractField, Flatten, HoistField, InsertField, MaskField,
                                              ReplaceField, ValueToKey)
from engine.connect.transforms.headers import DropHeaders, HeaderFrom, InsertHeader
from engine.connect.transforms.predicates import HasHeaderKey, Predicate, RecordIsTombstone, TopicNameMatches
from engine.connect.transforms.routing import Filter, RegexRouter, TimestampRouter
from engine.connect.transforms.schemas import SetSchemaMetadata
from engine.connect.transforms.timestamps import TimestampConverter

TRANSFORMS_PACKAGE = "org.apache.kafka.connect.transforms."
PREDICATES_PACKAGE = TRANSFORMS_PACKAGE + "predicates."


def _both(cls) -> dict[str, Callable[[], Transform]]:
    name = cls.__name__
    return {f"{name}$Key": lambda: cls("key"), f"{name}$Value": lambda: cls("value")}


TRANSFORMS: dict[str, Callable[[], Transform]] = {
    **_both(InsertField), **_both(ReplaceField), **_both(MaskField), **_both(ExtractField), **_both(HoistField),
    **_both(Flatten), **_both(Cast), **_both(TimestampConverter), **_both(SetSchemaMetadata), **_both(HeaderFrom),
    "ValueToKey": ValueToKey, "RegexRouter": RegexRouter, "TimestampRouter": TimestampRouter, "Filter": Filter,
    "InsertHeader": InsertHeader, "DropHeaders": DropHeaders,
}
PREDICATES: dict[str, Callable[[], Predicate]] = {
    "TopicNameMatches": TopicNameMatches, "HasHeaderKey": HasHeaderKey, "RecordIsTombstone": RecordIsTombstone}


def lookup(table: dict, package: str, class_name: str, what: str):
    """A new instance of the class `class_name` names in `table` (TRANSFORMS or PREDICATES), by
    its full name under `package` or its simple name; TransformConfigError listing the `what`
    this worker has otherwise."""
    name = class_name.strip()
    short = name[len(package):] if name.startswith(package) else name
    factory = table.get(short)
    if factory is None:
        raise TransformConfigError(f"Class {name} could not be found: this worker's {what} are "
                                   f"{', '.join(package + n for n in table)}")
    return factory()


def enrich(definition: ConfigDef, props: dict[str, str]) -> None:
    """Connect's enriched ConfigDef: for each transform and predicate alias the config names, a
    group of its own ("Transforms: route") with its `type`, `predicate` and `negate` (transforms),
    and the keys of its class when the class is known, so that validation lists and checks them."""
    for kind, table, package, what in (("transforms", TRANSFORMS, TRANSFORMS_PACKAGE, "Transforms"),
                                       ("predicates", PREDICATES, PREDICATES_PACKAGE, "Predicates")):
        for alias in props_list(props, kind):
            prefix, group = f"{kind}.{alias}.", f"{what}: {alias}"
            if prefix + "type" in definition.keys:
                continue
            definition.define(prefix + "type", STRING, importance=MEDIUM, group=group, order_in_group=0,
                              documentation=f"Class for the '{alias}' {kind[:-1]}.", display_name="Type")
            if kind == "transforms":
                definition.define(prefix + "predicate", STRING, "", MEDIUM, "The alias of a predicate used to "
                                  "determine whether to apply this transformation.", group=group, order_in_group=1,
                                  display_name="Predicate")
                definition.define(prefix + "negate", BOOLEAN, False, MEDIUM, "Whether the configured predicate "
                                  "should be negated.", group=group, order_in_group=2, display_name="Negate")
            class_name = str(props.get(prefix + "type") or "").strip()
            factory = table.get(class_name.removeprefix(package))
            if factory is None:
                continue
            for order, spec in enumerate(factory().keys, start=3):
                name, documentation = spec[0], spec[1]
                config_type = spec[2] if len(spec) > 2 else STRING
                required = len(spec) > 3 and spec[3]
                if required:
                    definition.define(prefix + name, config_type, importance=MEDIUM, documentation=documentation,
                                      group=group, order_in_group=order, display_name=name)
                else:
                    definition.define(prefix + name, config_type, None, LOW, documentation, group=group,
                                      order_in_group=order, display_name=name)
