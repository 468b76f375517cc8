from django.apps import AppConfig


class MessagesConfig(AppConfig):
    """Messages: browse, search, tail, produce and export a topic's records, with per-topic
    deserializers, schemas and masking rules (the only state the console keeps about them)."""

    name = "console.messages"
    label = "topic_messages"   # "messages" is django.contrib.messages
