"""`python -m engine share-groups` (kafka-share-groups.sh's shape), run as a real command
against a real engine: --list, --describe (offsets, members, state), --reset-offsets (dry run
by default, refused while members remain), --delete-offsets and --delete."""
from __future__ import annotations

import subprocess
import sys
import uuid

import pytest

from tests.support.engine_process import ROOT
from tests.support.groups import create_topic, produce, set_group_configs
from tests.support.share import ACCEPT, RawShareMember, describe_share_offsets, offsets_of


def cli(engine, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "engine", "share-groups", "--bootstrap-server", engine.bootstrap,
                           *args], cwd=ROOT, capture_output=True, text=True, timeout=60)


def table(output: str) -> list[dict[str, str]]:
    lines = [line for line in output.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith(("GROUP ", "TOPIC ")))
    header = lines[start].replace("COORDINATOR (ID)", "COORDINATOR").split()
    return [dict(zip(header, line.split())) for line in lines[start + 1:]]


@pytest.fixture
def worked_group(share_engine):
    """A share group that read 10 records of a 1-partition topic and accepted the first 6."""
    topic, group = f"cli-{uuid.uuid4().hex[:8]}", f"cli-g-{uuid.uuid4().hex[:6]}"
    create_topic(share_engine.bootstrap, topic, 1)
    produce(share_engine.bootstrap, topic, [f"r{i}".encode() for i in range(10)])
    set_group_configs(share_engine.bootstrap, group, {"share.auto.offset.reset": "earliest"})
    member = RawShareMember(share_engine.ports[0], group, topic, "worker-1")
    member.join()
    assert offsets_of(member.fetch()) == list(range(10))
    member.acknowledge([(0, 5, [ACCEPT])])
    member.start_heartbeats()
    yield topic, group, member
    member.close()


def test_list_and_describe_show_offsets_members_and_state(share_engine, worked_group):
    topic, group, _ = worked_group
    listed = cli(share_engine, "--list")
    assert listed.returncode == 0 and group in listed.stdout.split()
    consumer_groups = subprocess.run([sys.executable, "-m", "engine", "groups", "--bootstrap", share_engine.bootstrap,
                                      "--list"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert consumer_groups.returncode == 0 and group not in consumer_groups.stdout.split()   # as Kafka's tools
    stable = cli(share_engine, "--list", "--state", "Stable")
    assert {"GROUP": group, "STATE": "Stable"} in table(stable.stdout)

    offsets = cli(share_engine, "--describe", "--group", group)
    assert offsets.returncode == 0, offsets.stderr
    assert table(offsets.stdout) == [{"GROUP": group, "TOPIC": topic, "PARTITION": "0", "START-OFFSET": "6",
                                      "LAG": "4"}]
    members = table(cli(share_engine, "--describe", "--group", group, "--members", "--verbose").stdout)
    assert [(m["CONSUMER-ID"], m["#PARTITIONS"], m["MEMBER-EPOCH"], m["ASSIGNMENT"]) for m in members] == \
        [("worker-1", "1", "1", f"{topic}:0")]
    [state] = table(cli(share_engine, "--describe", "--group", group, "--state").stdout)
    assert (state["STATE"], state["#MEMBERS"]) == ("Stable", "1")

    unknown = cli(share_engine, "--describe", "--group", "no-such-share-group")
    assert unknown.returncode == 1 and "does not exist" in unknown.stderr and "Traceback" not in unknown.stderr


def test_reset_is_a_dry_run_refused_with_members_then_applied(share_engine, worked_group):
    topic, group, member = worked_group
    busy = cli(share_engine, "--reset-offsets", "--group", group, "--topic", topic, "--to-earliest", "--execute")
    assert busy.returncode == 1 and "not empty" in busy.stderr
    member.stop_heartbeats()
    member.fetch(epoch=-1)
    assert member.heartbeat(epoch=-1).error_code == 0

    dry = cli(share_engine, "--reset-offsets", "--group", group, "--topic", topic, "--to-offset", "2")
    assert dry.returncode == 0 and table(dry.stdout)[0]["NEW-OFFSET"] == "2"
    assert describe_share_offsets(share_engine.ports[0], group).topics[0].partitions[0].start_offset == 6

    done = cli(share_engine, "--reset-offsets", "--group", group, "--topic", f"{topic}:0", "--to-offset", "2",
               "--execute")
    assert done.returncode == 0, done.stderr
    [row] = describe_share_offsets(share_engine.ports[0], group).topics[0].partitions
    assert (row.start_offset, row.lag) == (2, 8)


def test_delete_offsets_then_delete_the_group(share_engine, worked_group):
    topic, group, member = worked_group
    refused = cli(share_engine, "--delete", "--group", group)
    assert refused.returncode == 1 and "NON_EMPTY_GROUP" in refused.stderr
    member.stop_heartbeats()
    member.fetch(epoch=-1)
    member.heartbeat(epoch=-1)

    deleted = cli(share_engine, "--delete-offsets", "--group", group, "--topic", topic)
    assert deleted.returncode == 0 and table(deleted.stdout) == [{"TOPIC": topic, "STATUS": "Successful"}]
    assert describe_share_offsets(share_engine.ports[0], group).topics == []

    gone = cli(share_engine, "--delete", "--group", group)
    assert gone.returncode == 0 and f"('{group}') was successful" in gone.stdout
    assert group not in cli(share_engine, "--list").stdout.split()


def test_bad_arguments_are_explained(share_engine):
    missing = cli(share_engine, "--describe")
    assert missing.returncode == 2 and "--group is required" in missing.stderr
    no_target = cli(share_engine, "--reset-offsets", "--group", "g", "--topic", "t")
    assert no_target.returncode == 2 and "--to-earliest" in no_target.stderr
