"""Reassignment plans at scale: our planner against Kafka's `--generate`, on the same snapshot.

A synthetic metadata snapshot: 40,000 partitions (400 topics x 100) with RF 3 over 12 brokers,
placed as Kafka places new topics, with log sizes drawn from a log-normal distribution (a
few big partitions, many small ones). Two scenarios: add a 13th broker, and decommission
broker 12. For each: planning time (goal: < 2 s), replicas moved (data copied), bytes, and
partitions touched, for our planner and for Kafka's algorithm (a fresh re-deal of every
topic, as `kafka-reassign-partitions.sh --generate` does). Goal: at most 0.2 of Kafka's moves.

    .venv/bin/python benchmarks/reassignment_plan.py [--topics 400] [--partitions 100] [--rounds 3]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from console.reassignments.kafka_generate import kafka_generate  # noqa: E402
from console.reassignments.plan_summary import summarize  # noqa: E402
from console.reassignments.planner import Placement, PlanGoals, plan_placement  # noqa: E402
from kafka_rules.assignment import assign_replicas_to_brokers  # noqa: E402

BROKERS = list(range(1, 13))


def snapshot(topics: int, partitions: int, rng: random.Random) -> list[Placement]:
    out = []
    for t in range(topics):
        assignment = assign_replicas_to_brokers(partitions=partitions, replication_factor=3, brokers=BROKERS,
                                                start_index=rng.randrange(12), replica_shift=rng.randrange(12))
        out.extend(Placement(f"topic-{t:04d}", p, replicas, int(rng.lognormvariate(17, 1.5)))
                   for p, replicas in enumerate(assignment))
    return out


def spread(target, brokers, index=None) -> str:
    c = Counter()
    for replicas in target.values():
        c.update(replicas if index is None else replicas[index:index + 1])
    values = [c[b] for b in brokers]
    return f"{min(values)}..{max(values)}"


def bytes_spread(summary, brokers) -> str:
    values = [b.bytes_after for b in summary.brokers if b.broker in brokers]
    mean = sum(values) / len(values)
    return f"{100 * (max(values) - mean) / mean:+.1f}% / {100 * (min(values) - mean) / mean:+.1f}%"


def run(name: str, placements, goals: PlanGoals, kafka_brokers: list[int], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        target = plan_placement(placements, goals=goals)
        times.append(time.perf_counter() - started)
    ours = summarize(placements, target)
    kafka_target = kafka_generate(placements, brokers=kafka_brokers, rng=random.Random(42))
    kafka = summarize(placements, kafka_target)
    ratio = ours.replica_moves / kafka.replica_moves
    print(f"\n{name}")
    print(f"  plan time (median of {rounds}): {statistics.median(times):.2f} s  (goal < 2 s)")
    row = "  {:<10} {:>15} {:>12} {:>18} {:>18} {:>13} {:>13}  {}"
    print(row.format("", "replicas moved", "GB copied", "partitions touched", "leadership changes",
                     "replicas/brk", "leaders/brk", "bytes/brk vs mean"))
    for label, summary, target_ in (("ours", ours, target), ("kafka", kafka, kafka_target)):
        print(row.format(label, f"{summary.replica_moves:,}", f"{summary.bytes_to_copy / 1e9:,.1f}",
                         f"{len(summary.moves):,}", f"{summary.leadership_changes:,}",
                         spread(target_, kafka_brokers), spread(target_, kafka_brokers, 0),
                         bytes_spread(summary, kafka_brokers)))
    total = len(placements) * 3
    print(f"  ours / kafka replicas moved: {ratio:.3f}  (goal <= 0.2); ours moved "
          f"{ours.replica_moves / total:.1%} of {total:,} replicas, kafka {kafka.replica_moves / total:.1%}")
    return ratio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=400)
    parser.add_argument("--partitions", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    placements = snapshot(args.topics, args.partitions, random.Random(1))
    print(f"{len(placements):,} partitions, RF 3, 12 brokers, "
          f"{sum(p.size for p in placements) * 3 / 1e12:.1f} TB of replicas (log-normal sizes)")
    add = run("Add broker 13", placements, PlanGoals(brokers={b: None for b in BROKERS + [13]}),
              BROKERS + [13], args.rounds)
    decommission = run("Decommission broker 12", placements,
                       PlanGoals(brokers={b: None for b in BROKERS}, exclude=frozenset({12})), BROKERS[:-1],
                       args.rounds)
    return 0 if add <= 0.2 and decommission <= 0.2 else 1


if __name__ == "__main__":
    sys.exit(main())
