"""A Kafka Connect cluster the console manages: its REST URL and how to log in to it.

The password never enters the database: `password_env` names a CONSOLE_SECRET_* environment
variable of the console's processes (the same rule as the Kafka clusters' secrets)."""
from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import models

from console.clusters.models import Cluster, secret_from_env, validate_secret_env_name


def validate_connect_url(value: str) -> None:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValidationError("Give the worker's REST address, e.g. http://127.0.0.1:8083 (http or https).")
    if parts.username or parts.password:
        raise ValidationError("Put the user in its own field and the password in a CONSOLE_SECRET_ variable, not "
                              "in the address.")
    if parts.query or parts.fragment:
        raise ValidationError("The address takes no query string or fragment.")


class ConnectCluster(models.Model):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="connect_clusters")
    name = models.CharField(max_length=200)
    url = models.CharField(max_length=500, validators=[validate_connect_url],
                           help_text="REST address of any worker of the Connect cluster.")
    username = models.CharField(max_length=200, blank=True, default="",
                                help_text="User for HTTP basic authentication, if the workers ask for one.")
    password_env = models.CharField(max_length=200, blank=True, default="", validators=[validate_secret_env_name],
                                    help_text="Name of the environment variable holding the password.")
    is_bundled = models.BooleanField(default=False, help_text="The worker that `make run` starts.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster", "-is_bundled", "name"]
        constraints = [models.UniqueConstraint(fields=["cluster", "name"], name="one_connect_name_per_cluster")]

    def __str__(self) -> str:
        return self.name

    def password(self) -> str:
        if not self.username:
            return ""
        if not self.password_env:
            return ""
        return secret_from_env(self.password_env, what="Connect REST password", cluster_name=self.name)
