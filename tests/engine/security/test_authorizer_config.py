"""Turning the authorizer on from Kafka's broker configs (authorizer.class.name, super.users,
allow.everyone.if.no.acl.found); the rules themselves are tested in tests/kafka_rules."""
import pytest

from engine.config import BrokerConfig, InvalidConfigError
from engine.security import authorizer as A
from kafka_rules.acl_index import AclIndex


def test_build_reads_kafkas_config_names():
    assert A.build(BrokerConfig(), AclIndex()) is None
    built = A.build(BrokerConfig(static={"authorizer.class.name": A.STANDARD_AUTHORIZER,
                                         "super.users": "User:admin; User:ops",
                                         "allow.everyone.if.no.acl.found": "true"}), AclIndex())
    assert built.super_users == {"User:admin", "User:ops", "User:__engine-inter-broker"}
    assert built.allow_if_no_acl is True
    with pytest.raises(InvalidConfigError, match="only org.apache.kafka.metadata.authorizer.StandardAuthorizer"):
        A.build(BrokerConfig(static={"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer"}), AclIndex())
    with pytest.raises(InvalidConfigError, match="super.users"):
        A.build(BrokerConfig(static={"authorizer.class.name": A.STANDARD_AUTHORIZER, "super.users": "admin"}),
                AclIndex())
