from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """Alert rules per cluster, evaluated by Celery beat on the console's observations
    (console.metrics), with silences, acknowledgements, a history, and notifications sent
    through an outbox (webhooks: generic JSON, Slack, Teams; e-mail)."""

    name = "console.alerts"
    label = "alerts"

    def ready(self) -> None:
        from console.alerts import live  # noqa: F401 - registers the navigation badge's live fragment
