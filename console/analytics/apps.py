from django.apps import AppConfig


class AnalyticsConfig(AppConfig):
    name = "console.analytics"
    label = "analytics"
    verbose_name = "Analytics"
