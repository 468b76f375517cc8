"""The operations a client may perform on a resource, as Kafka reports them with no authorizer.

Kafka answers `authorized_operations` (KIP-430) with every operation its ACL model defines for
the resource type (AclEntry.supportedOperations); with no authorizer, everything is allowed.
The numbers are AclOperation codes; the codec packs a set into the int32 bitfield.
Without an `include_*_authorized_operations` flag the field stays at its "not requested"
default, -2147483648.
"""
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION = 3, 4, 5, 6, 7, 8, 9
DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 10, 11, 12

TOPIC_OPERATIONS = frozenset({READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS})
GROUP_OPERATIONS = frozenset({READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS})
CLUSTER_OPERATIONS = frozenset({CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER,
                                DESCRIBE})
