from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """What the console observes of each cluster (observation.py, assessment.py) and `/metrics`
    in Prometheus's text format. No models: the observations live in the process."""

    name = "console.metrics"
    label = "metrics"
