"""Single message transforms and predicates (KIP-66, KIP-585): Kafka Connect's built-in ones,
by their class names, applied in order to each record of a task.

The connector's config, as Connect's:

    transforms=route,mask
    transforms.route.type=org.apache.kafka.connect.transforms.RegexRouter
    transforms.route.regex=(.*)-raw
    transforms.route.replacement=$1
    transforms.mask.type=org.apache.kafka.connect.transforms.MaskField$Value
    transforms.mask.fields=ssn
    transforms.mask.predicate=is-users
    transforms.mask.negate=false
    predicates=is-users
    predicates.is-users.type=org.apache.kafka.connect.transforms.predicates.TopicNameMatches
    predicates.is-users.pattern=users.*

This package's names are the API the tasks and validation use: TransformationChain (chain.py:
the transforms configured and applied, a dropped or failed record), enrich (registry.py: the
class names, built in or not, and validation's ConfigDef), and the errors (base.py). The
built-ins live by family: fields.py (InsertField, ReplaceField, MaskField, ExtractField,
HoistField, Flatten, Cast, ValueToKey), routing.py (RegexRouter, TimestampRouter, Filter),
headers.py (InsertHeader, DropHeaders, HeaderFrom), timestamps.py (TimestampConverter),
schemas.py (SetSchemaMetadata) and predicates.py; records.py reads and rewrites a record's key or
value and its schema for them. Not built in: custom transform and predicate classes.
"""
from engine.connect.transforms.base import Transform, TransformConfigError, TransformError
from engine.connect.transforms.chain import TransformationChain
from engine.connect.transforms.fields import (Cast, ExtractField, Flatten, HoistField, InsertField, MaskField,
                                              ReplaceField, ValueToKey)
from engine.connect.transforms.headers import DropHeaders, HeaderFrom, InsertHeader, header_bytes
from engine.connect.transforms.predicates import HasHeaderKey, Predicate, RecordIsTombstone, TopicNameMatches
from engine.connect.transforms.registry import PREDICATES, PREDICATES_PACKAGE, TRANSFORMS, TRANSFORMS_PACKAGE, enrich
from engine.connect.transforms.routing import Filter, RegexRouter, TimestampRouter
from engine.connect.transforms.schemas import SetSchemaMetadata
from engine.connect.transforms.timestamps import TimestampConverter

__all__ = [
    "TransformationChain", "enrich", "TransformConfigError", "TransformError", "Transform", "Predicate",
    "TRANSFORMS", "PREDICATES", "TRANSFORMS_PACKAGE", "PREDICATES_PACKAGE",
    "InsertField", "ReplaceField", "MaskField", "ExtractField", "HoistField", "Flatten", "Cast", "ValueToKey",
    "RegexRouter", "TimestampRouter", "Filter", "InsertHeader", "DropHeaders", "HeaderFrom", "header_bytes",
    "TimestampConverter", "SetSchemaMetadata", "TopicNameMatches", "HasHeaderKey", "RecordIsTombstone",
]
