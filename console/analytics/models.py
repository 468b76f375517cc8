from django.conf import settings
from django.db import models


class AnalyticsRun(models.Model):
    """One run of the Spark jobs for a cluster. The Celery task writes its progress here; the
    pages and the websocket only read and announce it."""

    QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"
    STATES = [(s, s) for s in (QUEUED, RUNNING, DONE, FAILED)]
    ACTIVE = (QUEUED, RUNNING)
    # What a run computes: the jobs over the lake; the jobs over topic contents (compaction,
    # record sizes and ages, read through the Kafka data source); a retention what-if.
    LAKE, RECORDS, WHAT_IF = "lake", "records", "what_if"
    KINDS = [(k, k) for k in (LAKE, RECORDS, WHAT_IF)]

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="analytics_runs")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    kind = models.CharField(max_length=8, choices=KINDS, default=LAKE)
    params = models.JSONField(default=dict, blank=True)             # a what-if's topic and retention values
    result = models.JSONField(default=dict, blank=True)             # a what-if's answer (small: one topic)
    state = models.CharField(max_length=8, choices=STATES, default=QUEUED)
    step = models.CharField(max_length=64, blank=True, default="")
    progress = models.PositiveSmallIntegerField(default=0)         # percent
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True, default="")
    # Liveness, for the watchdog: when the run was last sent to the queue, and the heartbeat its
    # worker writes while it runs (with the worker's name, for the error if it dies).
    sent_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True, default="")
    job_seconds = models.JSONField(default=dict, blank=True)        # {job name: seconds}

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["cluster", "-created_at"]), models.Index(fields=["cluster", "kind", "state"])]

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None
