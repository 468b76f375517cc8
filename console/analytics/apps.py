from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "console.analytics"
    label = "analytics"
    verbose_name = "Analytics"

    def ready(self) -> None:
        from console.analytics import live  # noqa: F401 - registers the analytics pages' live fragments
