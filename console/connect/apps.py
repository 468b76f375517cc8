from django.apps import AppConfig


class ConnectConfig(AppConfig):
    """Kafka Connect clusters of each Kafka cluster, managed through Connect's REST API."""

    name = "console.connect"
    label = "connect"

    def ready(self) -> None:
        from console.connect import live  # noqa: F401 - registers the Connect pages' live fragments
