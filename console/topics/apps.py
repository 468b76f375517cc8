from django.apps import AppConfig


class TopicsConfig(AppConfig):
    """Topics: list with CMAK stats, detail, and topic admin actions. No models: Kafka owns topics."""

    name = "console.topics"
    label = "topics"
