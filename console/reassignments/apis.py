"""Reassignments as JSON: the jobs of a cluster, and one job with its moves and progress."""
from console.accounts.roles import VIEWER
from console.clusters.selectors import cluster_get
from console.reassignments import selectors
from console.web import json_api

JOB_FIELDS = ("id", "name", "scenario", "state", "message", "created_at", "started_at", "finished_at",
              "throttle_bytes_per_sec", "per_broker_limit", "cluster_limit", "bytes_total", "bytes_done")


@json_api(VIEWER)
def job_list(request, cluster_id: int):
    jobs = selectors.reassignment_list(cluster=cluster_get(cluster_id=cluster_id))[:200]
    return {"jobs": [{**{f: getattr(job, f) for f in JOB_FIELDS}, "summary": job.summary} for job in jobs]}


@json_api(VIEWER)
def job_detail(request, cluster_id: int, job_id: int):
    job = selectors.reassignment_get(cluster=cluster_get(cluster_id=cluster_id), job_id=job_id)
    moves = job.moves.values("topic", "partition", "replicas_before", "replicas_after", "size", "bytes_copied",
                             "state", "error")[:selectors.MOVES_SHOWN]
    return {**{f: getattr(job, f) for f in JOB_FIELDS}, "summary": job.summary,
            "progress": selectors.job_progress(job=job).as_event(), "moves": list(moves)}
