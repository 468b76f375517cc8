"""The audit log's details as sentences: "Set retention.ms of orders from 604800000 ms (7 d) to
259200000 ms (3 d).", never a Python repr ("old: None").

Each action the console audits has a sentence of its own (`_SENTENCES`); an action without
one, or details a sentence cannot read, fall back to "Key: value." pairs in words. A failed
action adds the refusal, which console/errors.py already wrote as a sentence. The JSON API
keeps the raw details beside the sentence, for scripts.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from console import formatting

Details = Mapping[str, Any]


def _text(value: Any) -> str:
    """A detail value in words: None is "none", a list "a, b", a mapping "a = 1, b = 2"."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) and not isinstance(value, bool):
        return formatting.count(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k} = {_text(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value) or "none"
    return str(value)


def _config(name: str, value: Any) -> str:
    """A config value with its unit: "259200000 ms (3 d)"; None: "the default"."""
    return "the default" if value is None else formatting.config_with_unit(name, value)


def _partitions(n: Any) -> str:
    return f"{_text(n)} partition{'' if n == 1 else 's'}"


def _topic_create(target: str, d: Details) -> str:
    configs = d.get("configs") or {}
    extra = f", with {_text(configs)}" if configs else ", every config at its default"
    return (f"Create topic {target} with {_partitions(d.get('partitions'))} and replication factor "
            f"{_text(d.get('replication_factor'))}{extra}.")


def _delete_records(target: str, d: Details) -> str:
    partition, before = d.get("partition"), d.get("before_offset")
    if partition is None:
        what = f"every record of every partition of {target}"
    elif before is None:
        what = f"every record of {target}-{partition}"
    else:
        what = f"the records of {target}-{partition} below offset {_text(before)}"
    starts = d.get("log_start_offsets")
    after = f" The partitions now start at {_text(starts)}." if starts else ""
    return f"Delete {what}.{after}"


def _group_configs(kind: str) -> Callable[[str, Details], str]:
    """"Set consumer.session.timeout.ms of consumer group g to 50000 ms (50 s); reset ... to the
    brokers' values." from {"set": {...}, "reset": [...]}."""
    def sentence(target: str, d: Details) -> str:
        parts = [f"set {', '.join(f'{k} to {_config(k, v)}' for k, v in (d.get('set') or {}).items())}"
                 if d.get("set") else "",
                 f"reset {_text(d.get('reset'))} to the brokers' value" if d.get("reset") else ""]
        said = "; ".join(p for p in parts if p) or "change nothing"
        return f"Configs of {kind} {target}: {said}."
    return sentence


def _config_set(target: str, d: Details) -> str:
    where, _, key = target.rpartition(" ")
    key = d.get("key", key)
    old = d.get("old")
    where = where or target
    if d.get("value") is None:
        was = f" (it was {_config(key, old)})" if "old" in d else ""
        return f"Remove the override of {key} on {where}, back to its default{was}."
    was = f" from {_config(key, old)}" if "old" in d else ""
    return f"Set {key} of {where}{was} to {_config(key, d.get('value'))}."


def _add_partitions(target: str, d: Details) -> str:
    before = d.get("previous_partitions")
    since = f" from {_text(before)}" if before is not None else ""
    return f"Grow {target}{since} to {_partitions(d.get('total_partitions'))}."


def _election(target: str, d: Details) -> str:
    where = "every topic" if target == "*" else target
    failed = d.get("failed") or []
    elected = f": {_partitions(d['elected'])} moved to their preferred leader" if "elected" in d else ""
    return f"Preferred leader election for {where}{elected}" + (f"; {_text(failed)} failed." if failed else ".")


def _quota(verb: str) -> Callable[[str, Details], str]:
    def sentence(target: str, d: Details) -> str:
        key = d.get("key", "")
        old = d.get("old")
        was = f" (it was {_text(old)})" if old is not None else " (it was not set)" if "old" in d else ""
        if verb == "set":
            return f"Set the {key} quota of {target} to {_text(d.get('value'))}{was}."
        return f"Remove the {key} quota of {target}{was}."
    return sentence


def _reset(target: str, d: Details) -> str:
    listed = d.get("changes") or []
    count = d.get("partitions")
    changed = f", on {_partitions(count)}" if count is not None else ""
    clamped = f", {_text(d['clamped'])} clamped to the log's range" if d.get("clamped") else ""
    shown = f" ({'; '.join(listed)}{' …' if count and count > len(listed) else ''})" if listed else ""
    return f"Reset the committed offsets of group {target} to {d.get('reset', 'new offsets')}{changed}{clamped}{shown}."


def _broker(verb: str) -> Callable[[str, Details], str]:
    def sentence(target: str, d: Details) -> str:
        unchanged = "" if d.get("changed", True) else f" (it was already {verb})"
        return f"{verb.capitalize()} broker {target}{unchanged}."
    return sentence


def _produce(target: str, d: Details) -> str:
    copies = d.get("copies") or 1
    where = f" to partition {d['partition']}" if d.get("partition") is not None else ""
    return (f"Produce {_text(copies)} record{'' if copies == 1 else 's'}{where} of {target} "
            f"(key as {d.get('key_serializer', 'string')}, value as {d.get('value_serializer', 'string')}; "
            "the record's contents are not kept here).")


def _plan(target: str, d: Details) -> str:
    topics = d.get("topics")
    scope = f"topics {_text(topics)}" if topics else "every topic"
    brokers = f", brokers {_text(d['brokers'])}" if d.get("brokers") else ""
    factor = f", replication factor {_text(d['replication_factor'])}" if d.get("replication_factor") else ""
    job = f" (job {d['job']})" if d.get("job") else ""
    if "scenario" in d and "partitions" in d and "topics" not in d:
        return f"Import plan {target}: {_partitions(d['partitions'])}{job}."
    return f"Plan {target}: {d.get('scenario', 'a reassignment')} of {scope}{brokers}{factor}{job}."


def _run(target: str, d: Details) -> str:
    throttle = d.get("throttle_bytes_per_sec")
    limit = f"throttled at {formatting.size_rate(throttle)}" if throttle else "without a throttle"
    when = f", at {d['run_at']}" if d.get("run_at") else ""
    return (f"Run plan {target} {limit}{when}, at most {_text(d.get('per_broker_limit'))} moves per broker and "
            f"{_text(d.get('cluster_limit'))} in the cluster.")


def _acls(verb: str) -> Callable[[str, Details], str]:
    """ "Create 3 ACLs (wizard): User:app ALLOW READ on TOPIC orders, ... and 1 more." """
    def sentence(target: str, d: Details) -> str:
        count, listed = d.get("count", 0), list(d.get("acls") or [])
        source = f" ({d['source']})" if d.get("source") else ""
        more = f" and {_text(count - 3)} more" if count > 3 else ""
        text = f"{verb} {_text(count)} ACL{'' if count == 1 else 's'}{source}: {'; '.join(listed[:3]) or target}{more}."
        if d.get("refused"):
            text += f" The cluster refused {_text(len(d['refused']))} of them."
        if "removed" in d:
            text += f" The cluster removed {_text(d['removed'])}."
        return text
    return sentence


_SENTENCES: dict[str, Callable[[str, Details], str]] = {
    "acl.create": _acls("Create"),
    "acl.delete": _acls("Delete"),
    "scram.upsert": lambda t, d: (f"Set the SCRAM credentials of user {t} ({_text(d.get('mechanisms'))}, "
                                  f"{_text(d.get('iterations'))} iterations)."),
    "scram.remove": lambda t, d: f"Remove the SCRAM credentials of user {t} ({_text(d.get('mechanisms'))}).",
    "reassignment.plan": _plan,
    "reassignment.run": _run,
    "schema.register": lambda t, d: f"Register schema {t}" + (f" in {d['registry']}." if d.get("registry") else "."),
    "cluster.add": lambda t, d: (f"Register cluster {t} at {d.get('bootstrap_servers', '')} "
                                 f"({d.get('security_protocol', 'PLAINTEXT')}).").replace(" at  (", " ("),
    "topic.create": _topic_create,
    "topic.delete": lambda t, d: f"Delete topic {t}.",
    "topic.delete_records": _delete_records,
    "topic.config_set": _config_set,
    "broker.config_set": _config_set,
    "topic.add_partitions": _add_partitions,
    "topic.elect_preferred_leaders": _election,
    "topic.update_configs": lambda t, d: f"Make {_text(d.get('configs'))} the overrides of {t}.",
    "broker.stop": _broker("stopped"),
    "broker.start": _broker("started"),
    "quota.set": _quota("set"),
    "quota.remove": _quota("remove"),
    "group.reset_offsets": _reset,
    "group.delete_offsets": lambda t, d: (f"Delete the committed offsets of group {t} on topic {d.get('topic')}"
                                          + (f" ({_partitions(d['partitions'])})." if "partitions" in d else ".")),
    "group.delete": lambda t, d: f"Delete consumer group {t}.",
    "group.alter_configs": _group_configs("consumer group"),
    "share_group.alter_configs": _group_configs("share group"),
    "transaction.abort": lambda t, d: (f"Abort the transaction of producer {_text(d.get('producer_id'))} "
                                       f"(epoch {_text(d.get('producer_epoch'))}) open on {t} since offset "
                                       f"{_text(d.get('start_offset'))}."),
    "message.produce": _produce,
    "cluster.remove": lambda t, d: f"Remove cluster {t} from the console.",
}


def _pairs(details: Details) -> str:
    """The fallback: "Partition: 0. Before offset: none." from {"partition": 0, "before_offset": None}."""
    return " ".join(f"{key.replace('_', ' ').capitalize()}: {_text(value)}." for key, value in details.items()
                    if key not in ("error", "kafka_code"))


def describe(*, action: str, target: str, details: Details, failed: bool = False) -> str:
    """The entry in sentences: what was asked, and for a failure why it was refused."""
    sentence = _SENTENCES.get(action)
    try:
        text = sentence(target, details) if sentence else _pairs(details)
    except (KeyError, TypeError, ValueError, AttributeError):   # details of an older shape: still readable
        text = _pairs(details)
    if failed:
        error = details.get("error") or "No reason was recorded."
        text = f"{text} Refused: {error}" if text else f"Refused: {error}"
    return text
