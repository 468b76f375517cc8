from django.conf import settings
from django.db import models


class AuditLogEntry(models.Model):
    """One admin action: who, what, on which cluster and target, when, and how it ended.

    Names are copied next to the foreign keys so an entry still reads right after the user
    or the cluster row is deleted."""

    OK = "ok"
    FAILED = "failed"
    RESULTS = [(OK, "ok"), (FAILED, "failed")]

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    actor_name = models.CharField(max_length=150)
    cluster = models.ForeignKey("clusters.Cluster", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    cluster_name = models.CharField(max_length=200, blank=True)
    action = models.CharField(max_length=64)          # "<entity>.<action>": topic.create, broker.stop, ...
    target = models.CharField(max_length=300, blank=True)
    result = models.CharField(max_length=8, choices=RESULTS)
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    @property
    def registry(self) -> str:
        """The schema registry an action of no cluster went to (its details' "registry"), if any."""
        return (self.details or {}).get("registry", "") if isinstance(self.details, dict) else ""

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M:%S} {self.actor_name} {self.action} {self.target}: {self.result}"
