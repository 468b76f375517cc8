from django.apps import AppConfig


class QuotasConfig(AppConfig):
    """Client quotas (KIP-546): list, set and remove. No models: Kafka owns quotas."""

    name = "console.quotas"
    label = "quotas"
