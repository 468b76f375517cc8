from django.apps import AppConfig


class GroupsConfig(AppConfig):
    """Consumer groups: list, detail with lag, offset reset, offset and group deletion. No models: Kafka owns groups."""

    name = "console.groups"
    label = "groups"
