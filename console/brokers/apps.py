from django.apps import AppConfig


class BrokersConfig(AppConfig):
    """Brokers: the CMAK broker table, broker configs, and stop/start on the bundled engine."""

    name = "console.brokers"
    label = "brokers"
