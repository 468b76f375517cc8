"""A reassignment is a plan (draft) that becomes a job when it runs; one row per partition move.

The job's whole state lives here (Celery's advice): the worker that runs a step reads it
fresh, checks the cluster's real state, acts, and writes the outcome back. `tick_token`
names the one chain of steps allowed to run; `lease_until` keeps two steps of that chain
from overlapping.
"""
from django.conf import settings
from django.db import models


class Reassignment(models.Model):
    DRAFT, SCHEDULED, RUNNING, PAUSED = "draft", "scheduled", "running", "paused"
    CANCELLING, DONE, FAILED, CANCELLED = "cancelling", "done", "failed", "cancelled"
    STATES = [(s, s) for s in (DRAFT, SCHEDULED, RUNNING, PAUSED, CANCELLING, DONE, FAILED, CANCELLED)]
    ACTIVE = (SCHEDULED, RUNNING, PAUSED, CANCELLING)     # hold their partitions
    FINISHED = (DONE, FAILED, CANCELLED)

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="reassignments")
    name = models.CharField(max_length=200)
    scenario = models.CharField(max_length=32)            # rebalance, add, decommission, restrict, rf, manual, import
    parameters = models.JSONField(default=dict, blank=True)
    summary = models.JSONField(default=dict, blank=True)   # totals and per-broker before/after, at plan time
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    state = models.CharField(max_length=16, choices=STATES, default=DRAFT, db_index=True)
    message = models.TextField(blank=True, default="")     # why it failed, or what it waits for
    throttle_bytes_per_sec = models.BigIntegerField(null=True, blank=True)
    per_broker_limit = models.PositiveIntegerField(default=5)
    cluster_limit = models.PositiveIntegerField(default=50)
    elect_preferred = models.BooleanField(default=True)
    run_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0)
    rate_bytes_per_sec = models.FloatField(default=0)     # observed copy rate, smoothed
    progress_at = models.DateTimeField(null=True, blank=True)
    waiting_since = models.DateTimeField(null=True, blank=True)
    throttled_brokers = models.JSONField(default=list, blank=True)
    throttled_topics = models.JSONField(default=list, blank=True)
    tick_token = models.CharField(max_length=32, blank=True, default="")
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.state})"

    @property
    def is_active(self) -> bool:
        return self.state in self.ACTIVE


class ReassignmentMove(models.Model):
    PENDING, IN_FLIGHT, DONE, CANCELLED, FAILED = "pending", "in_flight", "done", "cancelled", "failed"
    STATES = [(s, s) for s in (PENDING, IN_FLIGHT, DONE, CANCELLED, FAILED)]

    job = models.ForeignKey(Reassignment, on_delete=models.CASCADE, related_name="moves")
    topic = models.CharField(max_length=249)
    partition = models.IntegerField()
    replicas_before = models.JSONField()
    replicas_after = models.JSONField()
    size = models.BigIntegerField(default=0)              # the leader's log size, bytes
    bytes_copied = models.BigIntegerField(default=0)
    state = models.CharField(max_length=16, choices=STATES, default=PENDING)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)     # AlterPartitionReassignments sent for it
    issued_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["topic", "partition"]
        constraints = [models.UniqueConstraint(fields=["job", "topic", "partition"], name="one_move_per_partition")]
        indexes = [models.Index(fields=["job", "state"])]

    @property
    def key(self) -> tuple[str, int]:
        return self.topic, self.partition

    @property
    def adding(self) -> list[int]:
        return [b for b in self.replicas_after if b not in self.replicas_before]

    @property
    def removing(self) -> list[int]:
        return [b for b in self.replicas_before if b not in self.replicas_after]

    @property
    def bytes_to_copy(self) -> int:
        return self.size * len(self.adding)


class PartitionLock(models.Model):
    """A partition held by an active job: the unique constraint keeps two jobs off one partition."""
    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    topic = models.CharField(max_length=249)
    partition = models.IntegerField()
    job = models.ForeignKey(Reassignment, on_delete=models.CASCADE, related_name="locks")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "topic", "partition"], name="one_job_per_partition")]


class ReassignmentSchedule(models.Model):
    """A recurring or one-off reassignment action, fired by beat through its PeriodicTask.

    REBALANCE plans a rebalance of `topics` (all when empty) and runs it, when the preferred
    leader skew is above `min_leader_skew_percent` (always when null); ELECT runs a
    preferred leader election. `cron` ("m h dom mon dow", UTC) or `run_at` (once)."""

    REBALANCE, ELECT = "rebalance", "elect"
    KINDS = [(REBALANCE, "Rebalance"), (ELECT, "Preferred leader election")]

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="reassignment_schedules")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=16, choices=KINDS)
    topics = models.JSONField(default=list, blank=True)
    cron = models.CharField(max_length=100, blank=True, default="")
    run_at = models.DateTimeField(null=True, blank=True)
    min_leader_skew_percent = models.FloatField(null=True, blank=True)
    throttle_bytes_per_sec = models.BigIntegerField(null=True, blank=True)
    enabled = models.BooleanField(default=True)
    periodic_task = models.OneToOneField("django_celery_beat.PeriodicTask", null=True, on_delete=models.SET_NULL,
                                         related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    last_fired_at = models.DateTimeField(null=True, blank=True)
    last_result = models.TextField(blank=True, default="")
    last_job = models.ForeignKey(Reassignment, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["name"]
