from django.db import models


class KnownBroker(models.Model):
    """A broker the console has seen in a Metadata response (or in the engine's broker list).

    Metadata lists live brokers only; remembering the others is how the overview can say
    "broker 2 is down" instead of silently showing two brokers."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="known_brokers")
    broker_id = models.IntegerField()
    host = models.CharField(max_length=255)
    port = models.IntegerField()
    rack = models.CharField(max_length=255, blank=True, default="")
    first_seen = models.DateTimeField(auto_now_add=True)
    last_seen = models.DateTimeField()

    class Meta:
        ordering = ["cluster", "broker_id"]
        constraints = [models.UniqueConstraint(fields=["cluster", "broker_id"], name="one_row_per_broker")]

    def __str__(self) -> str:
        return f"{self.cluster_id}/{self.broker_id} {self.host}:{self.port}"
