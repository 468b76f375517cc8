"""The authorizer against a reference model of Kafka's rules, on random bindings (seeded, so
every run checks the same cases), plus the named cases of StandardAuthorizer's own tests:
prefixes, the wildcard, DENY beating ALLOW, implied operations, super users and
allow.everyone.if.no.acl.found."""
import random
import uuid

import pytest

from kafka_rules.acl_index import AclIndex
from kafka_rules.authorizer import DEFAULT_ALLOW, DEFAULT_DENY, SUPER_USER, StandardAuthorizer, rule_text
from kafka_rules.acls import (ALL, ALLOW, ALTER, ALTER_CONFIGS, ANY, CLUSTER, CLUSTER_ACTION, CREATE, DELETE,
                              DENY, DESCRIBE, DESCRIBE_CONFIGS, GROUP, IDEMPOTENT_WRITE, LITERAL, MATCH, PREFIXED,
                              READ, TOPIC, TRANSACTIONAL_ID, WRITE, AclBinding, AclFilter)

NAMES = ["a", "ab", "abc", "abd", "b", "ba", "*", "orders", "orders-eu", "order"]
PRINCIPALS = ["User:alice", "User:bob", "User:*"]
HOSTS = ["*", "10.0.0.1", "10.0.0.2"]
OPERATIONS = [ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS]


def index_of(bindings) -> AclIndex:
    index = AclIndex()
    for binding in dict.fromkeys(bindings):
        index.add(str(uuid.uuid4()), binding)
    return index


def random_binding(rng: random.Random) -> AclBinding:
    return AclBinding(rng.choice([TOPIC, GROUP]), rng.choice(NAMES), rng.choice([LITERAL, PREFIXED]),
                      rng.choice(PRINCIPALS), rng.choice(HOSTS), rng.choice(OPERATIONS), rng.choice([ALLOW, DENY]))


# --- the reference model: every binding looked at, Kafka's rules written out plainly ---------

def covers(binding: AclBinding, resource_type: int, name: str) -> bool:
    if binding.resource_type != resource_type:
        return False
    if binding.pattern_type == LITERAL:
        return binding.resource_name in (name, "*")
    return name.startswith(binding.resource_name)


def grants(binding: AclBinding, principal: str, host: str, operation: int) -> bool:
    if binding.principal not in (principal, "User:*") or binding.host not in (host, "*"):
        return False
    if binding.operation in (ALL, operation):
        return True
    if binding.permission_type == DENY:
        return False
    return (operation == DESCRIBE and binding.operation in (READ, WRITE, DELETE, ALTER)) or \
        (operation == DESCRIBE_CONFIGS and binding.operation == ALTER_CONFIGS)


def reference(bindings, principal, host, operation, resource_type, name, *, super_users=(), allow_if_none=False):
    if principal in super_users:
        return True
    applying = [b for b in bindings if covers(b, resource_type, name)]
    if any(b.permission_type == DENY and grants(b, principal, host, operation) for b in applying):
        return False
    if any(b.permission_type == ALLOW and grants(b, principal, host, operation) for b in applying):
        return True
    return allow_if_none and not applying


@pytest.mark.parametrize("seed", range(40))
def test_random_bindings_decide_as_the_reference_model(seed):
    rng = random.Random(seed)
    bindings = list(dict.fromkeys(random_binding(rng) for _ in range(rng.randint(1, 30))))
    allow_if_none = seed % 2 == 1
    authorizer = StandardAuthorizer(index_of(bindings), super_users=frozenset({"User:root"}),
                                      allow_if_no_acl=allow_if_none)
    checked = 0
    for resource_type in (TOPIC, GROUP):
        for name in NAMES + ["abcd", "orders-us", "zzz", "o"]:
            for principal in ("User:alice", "User:bob", "User:carol", "User:root"):
                for host in ("10.0.0.1", "10.0.0.3"):
                    for operation in OPERATIONS[1:]:
                        expected = reference(bindings, principal, host, operation, resource_type, name,
                                             super_users={"User:root"}, allow_if_none=allow_if_none)
                        got, rule = authorizer.decide(principal, host, operation, resource_type, name)
                        assert got == expected, (bindings, principal, host, operation, resource_type, name)
                        assert rule_explains(rule, got, principal, host, operation, resource_type, name)
                        checked += 1
    assert checked > 1000


def rule_explains(rule, allowed, principal, host, operation, resource_type, name) -> bool:
    """The rule a decision names gives that answer: a binding that covers the resource and
    grants (or denies) the principal, or one of Kafka's named rules for the same answer."""
    if isinstance(rule, AclBinding):
        return covers(rule, resource_type, name) and grants(rule, principal, host, operation) and \
            (rule.permission_type == ALLOW) == allowed
    return rule == {True: SUPER_USER if principal == "User:root" else DEFAULT_ALLOW}.get(allowed, DEFAULT_DENY)


@pytest.mark.parametrize("seed", range(20))
def test_prefix_scan_finds_exactly_the_prefixes_of_a_name(seed):
    rng = random.Random(1000 + seed)
    alphabet = "ab-c"
    prefixes = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5))) for _ in range(rng.randint(1, 60))}
    index = index_of(AclBinding(TOPIC, p, PREFIXED, "User:a", "*", READ, ALLOW) for p in prefixes)
    for _ in range(200):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 7)))
        expected = sorted((p for p in prefixes if name.startswith(p)), key=len, reverse=True)
        assert list(index.prefixes_of(TOPIC, name)) == expected


@pytest.mark.parametrize("seed", range(20))
def test_filters_match_as_the_reference_model(seed):
    rng = random.Random(2000 + seed)
    bindings = list(dict.fromkeys(random_binding(rng) for _ in range(30)))
    index = index_of(bindings)
    for _ in range(50):
        pattern = rng.choice([ANY, MATCH, LITERAL, PREFIXED])
        acl_filter = AclFilter(rng.choice([ANY, TOPIC, GROUP]), rng.choice([None, *NAMES]), pattern,
                               rng.choice([None, *PRINCIPALS]), rng.choice([None, *HOSTS]),
                               rng.choice([ANY, *OPERATIONS]), rng.choice([ANY, ALLOW, DENY]))
        expected = {b for b in bindings if filter_reference(acl_filter, b)}
        assert {b for _, b in index.matching(acl_filter)} == expected


def filter_reference(f: AclFilter, b: AclBinding) -> bool:
    if f.resource_type != ANY and f.resource_type != b.resource_type:
        return False
    if f.pattern_type in (LITERAL, PREFIXED) and f.pattern_type != b.pattern_type:
        return False
    if f.resource_name is not None:
        if f.pattern_type == MATCH:
            if not covers(b, b.resource_type, f.resource_name):
                return False
        elif f.resource_name != b.resource_name:
            return False
    return all(want is None or want == have for want, have in ((f.principal, b.principal), (f.host, b.host))) and \
        f.operation in (ANY, b.operation) and f.permission_type in (ANY, b.permission_type)


# --- named cases --------------------------------------------------------------------------------

def decide(bindings, principal="User:alice", operation=READ, name="orders", resource_type=TOPIC, host="10.0.0.1",
           **options) -> bool:
    return StandardAuthorizer(index_of(bindings), **options).authorize(principal, host, operation, resource_type,
                                                                         name)


def allow(name="orders", operation=READ, pattern=LITERAL, principal="User:alice", host="*", resource_type=TOPIC):
    return AclBinding(resource_type, name, pattern, principal, host, operation, ALLOW)


def deny(name="orders", operation=READ, pattern=LITERAL, principal="User:alice", host="*", resource_type=TOPIC):
    return AclBinding(resource_type, name, pattern, principal, host, operation, DENY)


def test_deny_beats_allow_whatever_the_pattern():
    assert decide([allow("orders")]) is True
    assert decide([allow("orders"), deny("ord", pattern=PREFIXED)]) is False
    assert decide([allow("*"), deny("orders")]) is False
    assert decide([allow("orders"), deny("*", principal="User:*")]) is False


def test_prefixed_and_wildcard_bindings_reach_matching_names_only():
    assert decide([allow("ord", pattern=PREFIXED)], name="orders") is True
    assert decide([allow("orders-", pattern=PREFIXED)], name="orders") is False
    assert decide([allow("ord")], name="orders") is False          # a LITERAL "ord" is no prefix
    assert decide([allow("*")], name="anything") is True
    assert decide([allow("*", pattern=PREFIXED)], name="anything") is False   # a prefix "*" is a star, no wildcard


def test_implied_operations_come_from_allow_only():
    for granted in (READ, WRITE, DELETE, ALTER):
        assert decide([allow(operation=granted)], operation=DESCRIBE) is True
    assert decide([allow(operation=CREATE)], operation=DESCRIBE) is False
    assert decide([allow(operation=ALTER_CONFIGS)], operation=DESCRIBE_CONFIGS) is True
    assert decide([allow(operation=READ), deny(operation=WRITE)], operation=DESCRIBE) is True
    assert decide([allow(operation=DESCRIBE), deny(operation=READ)], operation=DESCRIBE) is True
    assert decide([allow(operation=ALL)], operation=ALTER_CONFIGS) is True
    assert decide([allow(operation=READ), deny(operation=ALL)], operation=DESCRIBE) is False


def test_principal_and_host_must_match():
    assert decide([allow(principal="User:bob")]) is False
    assert decide([allow(principal="User:*")]) is True
    assert decide([allow(host="10.0.0.1")], host="10.0.0.1") is True
    assert decide([allow(host="10.0.0.1")], host="10.0.0.2") is False


def test_super_users_and_the_no_acl_default():
    assert decide([], principal="User:admin", super_users=frozenset({"User:admin"})) is True
    assert decide([deny(principal="User:admin")], principal="User:admin", super_users=frozenset({"User:admin"}))
    assert decide([]) is False
    assert decide([], allow_if_no_acl=True) is True
    # Any binding on the resource, for anyone, takes the default away.
    assert decide([allow(principal="User:bob")], allow_if_no_acl=True) is False
    assert decide([allow("other")], allow_if_no_acl=True) is True


def test_authorized_operations_lists_what_the_principal_may_do():
    authorizer = StandardAuthorizer(index_of([allow(operation=WRITE), allow(operation=ALTER_CONFIGS)]))
    assert authorizer.authorized_operations("User:alice", "h", TOPIC, "orders") == \
        {WRITE, DESCRIBE, ALTER_CONFIGS, DESCRIBE_CONFIGS}
    cluster = StandardAuthorizer(index_of([allow("kafka-cluster", IDEMPOTENT_WRITE, resource_type=CLUSTER)]))
    assert cluster.authorized_operations("User:alice", "h", CLUSTER, "kafka-cluster") == {IDEMPOTENT_WRITE}


def test_authorize_by_resource_type_as_kafkas_default_implementation():
    def by_type(bindings, **options):
        return StandardAuthorizer(index_of(bindings), **options).authorize_by_resource_type(
            "User:alice", "10.0.0.1", WRITE, TOPIC)
    assert by_type([]) is False
    assert by_type([allow("t1", WRITE)]) is True
    assert by_type([allow("t1", WRITE), deny("t1", WRITE)]) is False
    assert by_type([allow("t1", WRITE), deny("t", WRITE, pattern=PREFIXED)]) is False
    assert by_type([allow("t1", WRITE), allow("u", WRITE, pattern=PREFIXED), deny("t", WRITE, pattern=PREFIXED)])
    assert by_type([allow("*", WRITE), deny("*", WRITE)]) is False
    assert by_type([allow("*", WRITE)]) is True
    assert by_type([allow("t1", READ)]) is False
    assert by_type([allow("t1", WRITE, resource_type=TRANSACTIONAL_ID)]) is False
    assert by_type([], super_users=frozenset({"User:alice"})) is True
    assert by_type([], allow_if_no_acl=True) is True


def test_the_index_follows_adds_and_removes():
    index = AclIndex()
    index.add("1", allow("ord", pattern=PREFIXED))
    index.add("2", allow("orders-eu", pattern=PREFIXED))
    version = index.version
    assert list(index.prefixes_of(TOPIC, "orders-eu-1")) == ["orders-eu", "ord"]
    assert index.remove("1") == allow("ord", pattern=PREFIXED)
    assert list(index.prefixes_of(TOPIC, "orders-eu-1")) == ["orders-eu"]
    assert index.version > version
    with pytest.raises(ValueError):
        index.add("3", allow("orders-eu", pattern=PREFIXED))    # the same binding twice


def test_cluster_action_is_its_own_operation():
    assert decide([allow("kafka-cluster", ALTER, resource_type=CLUSTER)], operation=CLUSTER_ACTION,
                  name="kafka-cluster", resource_type=CLUSTER) is False


def test_a_decision_names_its_rule_as_kafkas_audit_log_does():
    denying, allowing = deny("ord", pattern=PREFIXED), allow("orders", WRITE)
    authorizer = StandardAuthorizer(index_of([allowing, denying]), super_users=frozenset({"User:root"}))
    assert authorizer.decide("User:alice", "10.0.0.1", READ, TOPIC, "orders") == (False, denying)
    assert authorizer.decide("User:alice", "10.0.0.1", DESCRIBE, TOPIC, "orders") == (True, allowing)
    assert authorizer.decide("User:root", "10.0.0.1", READ, TOPIC, "orders") == (True, SUPER_USER)
    assert authorizer.decide("User:bob", "10.0.0.1", READ, TOPIC, "orders") == (False, DEFAULT_DENY)
    assert rule_text(denying) == ("MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=ord, "
                                  "patternType=PREFIXED, principal=User:alice, host=*, operation=READ, "
                                  "permissionType=DENY))")
    open_authorizer = StandardAuthorizer(index_of([allowing]), allow_if_no_acl=True)
    assert open_authorizer.decide("User:bob", "10.0.0.1", READ, TOPIC, "payments") == (True, DEFAULT_ALLOW)
    assert open_authorizer.decide("User:bob", "10.0.0.1", READ, TOPIC, "orders") == (False, DEFAULT_DENY)
