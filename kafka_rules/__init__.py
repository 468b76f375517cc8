"""Kafka's rules that the engine and the console both follow, as pure functions: no I/O, no
Django, no event loop.

The import graph goes one way: `console` imports `engine` (the protocol specs) and
`kafka_rules`; `engine` imports `kafka_rules`; `kafka_rules` imports neither
(tests/test_import_graph.py keeps it so). A rule lives here once two sides need it, so the
broker and the console cannot come to disagree on it.

- `lag`: consumer lag, and one partition's lag.
- `assignment`: Kafka's rack-unaware replica assignment (`AdminUtils.assignReplicasToBrokers`).
- `acls`, `acl_index`, `authorizer`: Kafka's ACL model (bindings, filters, their checks), the
  ACLs indexed by resource, and StandardAuthorizer's decisions (KIP-801).
- `client_quotas`: which entity's client quota applies to a user and client id (Kafka's order).
- `config_docs`: one line of documentation per config, which the engine sends in
  DescribeConfigs and the console shows for clusters that send none.
"""
