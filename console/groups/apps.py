from django.apps import AppConfig


class GroupsConfig(AppConfig):
    """Consumer groups: list, detail with lag, offset reset, offset and group deletion. No models: Kafka owns groups."""

    name = "console.groups"
    label = "groups"

    def ready(self) -> None:
        from console.groups import live  # noqa: F401 - registers the group page's live fragment
