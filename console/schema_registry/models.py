"""Where a cluster's schema registry is and how to log in to it. The schemas live in the registry."""
from django.db import models

from console.clusters.models import validate_secret_env_name


class RegistrySettings(models.Model):
    """A cluster's Confluent-compatible schema registry (ours, Confluent's, Karapace, Redpanda's).

    Secrets never enter the database: the password or the bearer token is named by a
    CONSOLE_SECRET_* environment variable, as a cluster's SASL password is. The bundled cluster
    without a row uses the bundled registry (settings.SCHEMA_REGISTRY_URL and its token file)."""

    NONE, BASIC, BEARER = "none", "basic", "bearer"
    AUTH_KINDS = [(NONE, "none"), (BASIC, "HTTP basic (user and password)"), (BEARER, "bearer token")]

    cluster = models.OneToOneField("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    url = models.URLField(max_length=500, blank=True, default="",
                          help_text="The registry's base URL, e.g. http://registry:8081. Empty: no registry.")
    auth = models.CharField(max_length=8, choices=AUTH_KINDS, default=NONE)
    username = models.CharField(max_length=200, blank=True, default="")
    secret_env = models.CharField(max_length=200, blank=True, default="", validators=[validate_secret_env_name],
                                  help_text="The CONSOLE_SECRET_* variable holding the password or the token.")
    updated_at = models.DateTimeField(auto_now=True)


class SubjectUsage(models.Model):
    """A topic seen carrying records framed with a schema id of a subject (RecordNameStrategy
    subjects are not named after their topics; the message pages notice them as they decode)."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    topic = models.CharField(max_length=249)
    subject = models.CharField(max_length=1024)
    last_seen = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "topic", "subject"], name="one_usage_row")]
