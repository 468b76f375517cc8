"""`python -m engine reassign-partitions`: generate, execute with a throttle, verify (which
clears the throttles), list and cancel, with Kafka's JSON files and lines."""
from __future__ import annotations

import json

from tests.engine.tools.conftest import run_tool
from tests.support.waiting import wait_until


def test_generate_execute_verify_with_a_throttle(group_cluster, topic_name, tmp_path):
    run_tool(group_cluster, "topics", "--create", "--topic", topic_name, "--replica-assignment", "0:1,1:2")
    topics = tmp_path / "topics.json"
    topics.write_text(json.dumps({"topics": [{"topic": topic_name}], "version": 1}))
    generated = run_tool(group_cluster, "reassign-partitions", "--generate", "--topics-to-move-json-file", str(topics),
                         "--broker-list", "0,1,2").stdout.splitlines()
    assert generated[0] == "Current partition replica assignment"
    assert json.loads(generated[1]) == {"version": 1, "partitions": [
        {"topic": topic_name, "partition": 0, "replicas": [0, 1], "log_dirs": ["any", "any"]},
        {"topic": topic_name, "partition": 1, "replicas": [1, 2], "log_dirs": ["any", "any"]}]}
    assert generated[2:4] == ["", "Proposed partition reassignment configuration"]
    proposal = json.loads(generated[4])
    assert [len(p["replicas"]) for p in proposal["partitions"]] == [2, 2]

    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic_name, "partition": 0, "replicas": [2, 0], "log_dirs": ["any", "any"]}]}))
    executed = run_tool(group_cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan),
                        "--throttle", "50000000")
    assert executed.returncode == 0, executed.stdout
    assert executed.stdout.splitlines() == [
        "Current partition replica assignment", "",
        json.dumps({"version": 1, "partitions": [{"topic": topic_name, "partition": 0, "replicas": [0, 1],
                                                 "log_dirs": ["any", "any"]}]}, separators=(",", ":")), "",
        "Save this to use as the --reassignment-json-file option during rollback",
        "Warning: You must run --verify periodically, until the reassignment completes, to ensure the throttle is "
        "removed.",
        "The inter-broker throttle limit was set to 50000000 B/s",
        f"Successfully started partition reassignment for {topic_name}-0"]
    throttled = run_tool(group_cluster, "configs", "--describe", "--topic", topic_name).stdout
    assert "leader.replication.throttled.replicas=0:0,0:1" in throttled
    assert "follower.replication.throttled.replicas=0:2" in throttled

    def verified():
        out = run_tool(group_cluster, "reassign-partitions", "--verify", "--reassignment-json-file", str(plan)).stdout
        return out if f"Reassignment of partition {topic_name}-0 is completed." in out else None
    out = wait_until(verified, 60, interval=0.5, message="reassignment completed").splitlines()
    assert out[0] == "Status of partition reassignment:"
    assert out[-2:] == ["Clearing broker-level throttles on brokers 0,1,2",
                        f"Clearing topic-level throttles on topic {topic_name}"]
    assert "throttled" not in run_tool(group_cluster, "configs", "--describe", "--topic", topic_name).stdout
    assert run_tool(group_cluster, "reassign-partitions", "--list").stdout == "No partition reassignments found.\n"
    cancelled = run_tool(group_cluster, "reassign-partitions", "--cancel", "--reassignment-json-file", str(plan),
                         "--preserve-throttles")
    assert cancelled.stdout == ("None of the specified partition reassignments are active.\n"
                                "None of the specified partition moves are active.")


def test_bad_plans_are_refused_with_kafkas_messages(group_cluster, topic_name, tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": topic_name, "partition": 0, "replicas": [0, 0]}]}))
    doubled = run_tool(group_cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan))
    assert (doubled.returncode, doubled.stdout.strip()) == (
        1, f"Error: Partition replica lists may not contain duplicate entries: {topic_name}-0 contains multiple "
           "entries for 0")
    plan.write_text(json.dumps({"version": 1, "partitions": [{"topic": topic_name, "partition": 0,
                                                              "replicas": [0, 9]}]}))
    unknown = run_tool(group_cluster, "reassign-partitions", "--execute", "--reassignment-json-file", str(plan))
    assert (unknown.returncode, unknown.stdout.strip()) == (1, "Error: Unknown broker id 9")
    plan.write_text("{nope")
    broken = run_tool(group_cluster, "reassign-partitions", "--verify", "--reassignment-json-file", str(plan))
    assert (broken.returncode, broken.stdout.strip()) == (1, "Error: The input string is not a valid JSON")
    usage = run_tool(group_cluster, "reassign-partitions", "--list", "--throttle", "5")
    assert usage.returncode == 1
    assert usage.stderr.startswith("Option \"[throttle]\" can't be used with action \"[list]\"")
