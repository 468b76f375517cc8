"""Reads for reassignments: the cluster's placement snapshot, jobs, and a job's progress and timing."""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils import timezone

from console.clusters.gateway import cluster_gateway
from console.clusters.models import Cluster
from console.errors import NotFound
from console.kafka_gateway import group_partitions
from console.reassignments.models import Reassignment, ReassignmentMove, ReassignmentSchedule
from console.reassignments.planner import Placement

MOVES_SHOWN = 500    # rows on the review page; the export has them all


@dataclass(frozen=True)
class Snapshot:
    placements: list[Placement]
    brokers: dict[int, str | None]      # live brokers and brokers holding replicas -> rack
    live_brokers: frozenset[int]


def cluster_snapshot(*, cluster: Cluster, topics: Iterable[str] | None = None) -> Snapshot:
    """Every partition of `topics` (all non-internal topics when None) with its replicas and
    its leader's log size (DescribeLogDirs), and the brokers with their racks."""
    with cluster_gateway(cluster) as gw:
        meta = gw.metadata(None if topics is None else list(topics))
        wanted = [t for t in meta.topics if not t.is_internal]
        if topics is not None:
            missing = sorted(set(topics) - {t.name for t in wanted})
            if missing:
                raise NotFound(f"Unknown {'topics' if len(missing) > 1 else 'topic'}: {', '.join(missing)}.")
        partitions = [p for t in wanted for p in t.partitions]
        live = frozenset(b.node_id for b in meta.brokers)
        sizes = {}
        if partitions:
            for r in gw.replica_log_dirs(group_partitions(partitions), sorted(live)):
                sizes[r.topic, r.partition, r.broker_id] = r.size
    brokers: dict[int, str | None] = {b.node_id: b.rack for b in meta.brokers}
    for p in partitions:
        for b in p.replicas:
            brokers.setdefault(b, None)
    placements = [Placement(p.topic, p.partition, tuple(p.replicas), _partition_size(p, sizes))
                  for p in partitions]
    return Snapshot(placements=placements, brokers=brokers, live_brokers=live)


def _partition_size(p, sizes: dict) -> int:
    """The leader's size; the largest replica's when the leader did not answer."""
    if (p.topic, p.partition, p.leader) in sizes:
        return sizes[p.topic, p.partition, p.leader]
    return max((sizes.get((p.topic, p.partition, b), 0) for b in p.replicas), default=0)


def reassignment_list(*, cluster: Cluster) -> QuerySet[Reassignment]:
    return Reassignment.objects.filter(cluster=cluster)


def reassignment_get(*, cluster: Cluster, job_id: int) -> Reassignment:
    try:
        return Reassignment.objects.get(cluster=cluster, pk=job_id)
    except Reassignment.DoesNotExist:
        raise NotFound(f"There is no reassignment {job_id} on {cluster.name}.") from None


@dataclass(frozen=True)
class Progress:
    job_id: int
    state: str
    message: str
    moves_total: int
    moves_done: int
    moves_in_flight: int
    bytes_total: int
    bytes_done: int
    percent: float
    eta_seconds: float | None
    eta_basis: str = ""               # "observed rate" or "throttle": what the ETA divides by
    is_active: bool = False           # the job still holds its partitions (Pause/Cancel apply)

    def as_event(self) -> dict:
        return {"job": self.job_id, "state": self.state, "message": self.message, "moves_total": self.moves_total,
                "moves_done": self.moves_done, "moves_in_flight": self.moves_in_flight,
                "bytes_total": self.bytes_total, "bytes_done": self.bytes_done, "percent": self.percent,
                "eta_seconds": self.eta_seconds, "eta_basis": self.eta_basis, "is_active": self.is_active}


def busiest_bytes(job: Reassignment) -> int:
    """The most bytes one broker copies in or out in the plan: with a throttle per broker, the
    job takes at least that divided by the throttle."""
    return max((max(b["bytes_in"], b["bytes_out"]) for b in job.summary.get("brokers", [])), default=0)


def throttled_duration(job: Reassignment, *, remaining: int | None = None) -> float | None:
    """Seconds the (remaining) copy takes at the job's throttle: the busiest broker's share."""
    if not job.throttle_bytes_per_sec:
        return None
    busiest, total = busiest_bytes(job), job.summary.get("bytes_to_copy") or job.bytes_total
    if remaining is not None and total:
        busiest = busiest * min(1.0, remaining / total)
    return busiest / job.throttle_bytes_per_sec


def job_progress(*, job: Reassignment) -> Progress:
    """Moves and bytes done; the percentage counts bytes (moves when nothing is to copy)."""
    counts = {s: 0 for s, _ in ReassignmentMove.STATES}
    for state in job.moves.values_list("state", flat=True):
        counts[state] += 1
    total = sum(counts.values())
    finished = counts[ReassignmentMove.DONE] + counts[ReassignmentMove.CANCELLED] + counts[ReassignmentMove.FAILED]
    if job.state == Reassignment.DONE:
        percent = 100.0
    elif job.bytes_total > 0:
        percent = min(100.0, 100.0 * job.bytes_done / job.bytes_total)
    else:
        percent = 100.0 * finished / total if total else 100.0
    remaining = max(0, job.bytes_total - job.bytes_done)
    eta, basis = None, ""
    if job.is_active and job.rate_bytes_per_sec > 0:
        eta, basis = remaining / job.rate_bytes_per_sec, "observed rate"
    elif job.is_active and job.throttle_bytes_per_sec:      # nothing measured yet: the throttle bounds it
        eta, basis = throttled_duration(job, remaining=remaining), "throttle"
    return Progress(job_id=job.pk, state=job.state, message=job.message, moves_total=total,
                    moves_done=counts[ReassignmentMove.DONE], moves_in_flight=counts[ReassignmentMove.IN_FLIGHT],
                    bytes_total=job.bytes_total, bytes_done=job.bytes_done, percent=round(percent, 1),
                    eta_seconds=None if eta is None else round(eta, 1), eta_basis=basis, is_active=job.is_active)


@dataclass(frozen=True)
class Timing:
    """When a job started and ended, and how long it ran (paused time included): the end and
    the whole duration once it is done, failed or cancelled, the time so far while it runs."""

    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    elapsed_seconds: float | None
    finished: bool


def job_timing(*, job: Reassignment, now: dt.datetime | None = None) -> Timing:
    finished = job.state in Reassignment.FINISHED
    end = job.finished_at if finished else (None if job.started_at is None else now or timezone.now())
    elapsed = None if job.started_at is None or end is None else max(0.0, (end - job.started_at).total_seconds())
    return Timing(started_at=job.started_at, finished_at=job.finished_at if finished else None,
                  elapsed_seconds=elapsed, finished=finished)


def schedule_list(*, cluster: Cluster) -> QuerySet[ReassignmentSchedule]:
    return ReassignmentSchedule.objects.filter(cluster=cluster).select_related("last_job")


def schedule_get(*, cluster: Cluster, schedule_id: int) -> ReassignmentSchedule:
    try:
        return ReassignmentSchedule.objects.get(cluster=cluster, pk=schedule_id)
    except ReassignmentSchedule.DoesNotExist:
        raise NotFound(f"There is no schedule {schedule_id} on {cluster.name}.") from None
