"""Alert rules, their alerts, silences, the history, and the notification outbox.

An alert is one rule breached by one subject (a group, a topic, a partition, a broker, a log
dir): at most one open alert per rule and subject (pending or firing), which is the
de-duplication. Every state change is an `AlertEvent` (the history); each event that notifies
gets one `Notification` row per receiver, written in the same transaction: the outbox that
workers deliver from, so no notification is lost between a commit and a queue.
"""
from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models

from console.clusters.models import Cluster


class Receiver(models.Model):
    WEBHOOK, SLACK, TEAMS, EMAIL = "webhook", "slack", "teams", "email"
    KINDS = [(WEBHOOK, "Webhook (JSON)"), (SLACK, "Slack webhook"), (TEAMS, "Microsoft Teams webhook"),
             (EMAIL, "E-mail")]

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=16, choices=KINDS)
    # Webhooks: a URL whose secret parts are `{CONSOLE_SECRET_NAME}` placeholders, filled from
    # the environment when sending; the database and the pages never hold the secret.
    url = models.CharField(max_length=2000, blank=True, default="")
    emails = models.CharField(max_length=2000, blank=True, default="", help_text="Comma-separated addresses.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class AlertRule(models.Model):
    GROUP_LAG, GROUP_TIME_LAG, GROUP_STATUS, CATCH_UP = "group_lag", "group_time_lag", "group_status", "catch_up"
    UNDER_REPLICATED, OFFLINE, BROKER_DOWN = "under_replicated", "offline", "broker_down"
    LOG_DIR_USAGE, UNCLEANABLE, HANGING_TRANSACTION = "log_dir_usage", "uncleanable", "hanging_transaction"
    KINDS = [
        (GROUP_LAG, "Consumer group lag above N records"),
        (GROUP_TIME_LAG, "Consumer group time lag above T seconds"),
        (GROUP_STATUS, "Consumer group Burrow status"),
        (CATCH_UP, "Estimated catch-up time above T seconds"),
        (UNDER_REPLICATED, "Under-replicated partitions"),
        (OFFLINE, "Offline partitions"),
        (BROKER_DOWN, "A broker down"),
        (LOG_DIR_USAGE, "A log dir above a share of its disk"),
        (UNCLEANABLE, "Uncleanable partitions in a log dir"),
        (HANGING_TRANSACTION, "A transaction open longer than T seconds"),
    ]
    ALL, EXACT, PREFIX, REGEX = "all", "exact", "prefix", "regex"
    TARGETS = [(ALL, "all"), (EXACT, "one name"), (PREFIX, "names starting with"), (REGEX, "names matching (RE2)")]

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="alert_rules")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=32, choices=KINDS)
    target_type = models.CharField(max_length=8, choices=TARGETS, default=ALL)
    target = models.CharField(max_length=1000, blank=True, default="")
    threshold = models.FloatField(default=0)
    statuses = models.CharField(max_length=64, blank=True, default="", help_text="Burrow statuses, comma-separated")
    for_seconds = models.PositiveIntegerField(default=0)
    enabled = models.BooleanField(default=True)
    receivers = models.ManyToManyField(Receiver, blank=True, related_name="rules")
    last_fired_at = models.DateTimeField(null=True, blank=True)
    last_value = models.FloatField(null=True, blank=True)
    last_evaluated_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="alert_rule_name_per_cluster")]

    def __str__(self) -> str:
        return self.name


class RuleValue(models.Model):
    """The rule's worst value at each evaluation round, for its sparkline (the newest kept)."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="values")
    at = models.DateTimeField()
    value = models.FloatField()

    class Meta:
        ordering = ["rule", "at"]
        indexes = [models.Index(fields=["rule", "at"])]


class Alert(models.Model):
    PENDING, FIRING, RESOLVED = "pending", "firing", "resolved"
    STATES = [(PENDING, "pending"), (FIRING, "firing"), (RESOLVED, "resolved")]

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="alerts")
    subject = models.CharField(max_length=1000)
    state = models.CharField(max_length=8, choices=STATES)
    value = models.FloatField(null=True)
    open = models.BooleanField(default=True)          # pending or firing: one per rule and subject
    pending_since = models.DateTimeField()
    fired_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    acknowledged_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-pending_since"]
        constraints = [models.UniqueConstraint(fields=["rule", "subject"], condition=models.Q(open=True),
                                               name="one_open_alert_per_rule_subject")]


class AlertEvent(models.Model):
    PENDING, FIRING, RESOLVED, CLEARED = "pending", "firing", "resolved", "cleared"
    ACKNOWLEDGED = "acknowledged"
    KINDS = [(k, k) for k in (PENDING, FIRING, RESOLVED, CLEARED, ACKNOWLEDGED)]

    alert = models.ForeignKey(Alert, on_delete=models.CASCADE, related_name="events")
    kind = models.CharField(max_length=16, choices=KINDS)
    value = models.FloatField(null=True)
    at = models.DateTimeField()
    by = models.CharField(max_length=150, blank=True, default="")
    silenced = models.BooleanField(default=False)      # a firing or resolution nobody was told of

    class Meta:
        ordering = ["-at", "-pk"]


class Silence(models.Model):
    """No notifications for a rule's alerts (optionally one subject) until `until`."""

    rule = models.ForeignKey(AlertRule, on_delete=models.CASCADE, related_name="silences")
    subject = models.CharField(max_length=1000, blank=True, default="", help_text="Empty: every subject")
    until = models.DateTimeField()
    reason = models.CharField(max_length=500, blank=True, default="")
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-until"]


class Notification(models.Model):
    """One message to one receiver about one event: the outbox row. `delivery_key` goes with
    the message (the Idempotency-Key header, the payload, the e-mail's Message-ID), so a
    receiver can drop a repeat."""

    PENDING, SENDING, SENT, FAILED = "pending", "sending", "sent", "failed"
    STATES = [(s, s) for s in (PENDING, SENDING, SENT, FAILED)]

    event = models.ForeignKey(AlertEvent, on_delete=models.CASCADE, related_name="notifications")
    receiver = models.ForeignKey(Receiver, on_delete=models.CASCADE, related_name="notifications")
    delivery_key = models.UUIDField(default=uuid.uuid4, unique=True, editable=False)
    state = models.CharField(max_length=8, choices=STATES, default=PENDING)
    attempts = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    lease_until = models.DateTimeField(null=True, blank=True)     # a worker is sending it until then
    last_error = models.CharField(max_length=1000, blank=True, default="")
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["next_attempt_at"]
        indexes = [models.Index(fields=["state", "next_attempt_at"])]
        constraints = [models.UniqueConstraint(fields=["event", "receiver"], name="one_notification_per_receiver")]
