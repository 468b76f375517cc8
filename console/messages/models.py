"""What the console remembers about a topic's messages: how to read them, the schemas they are
written with, and what viewers must not see. Kafka owns the records themselves."""
from django.db import models

FORMATS = ["auto", "string", "json", "avro", "protobuf", "msgpack", "hex", "base64"]
FORMAT_CHOICES = [(f, f) for f in FORMATS]


class TopicMessageSettings(models.Model):
    """Deserializers chosen for one topic (remembered across visits), its Avro schema and its
    Protobuf FileDescriptorSet with the message type to read."""

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    topic = models.CharField(max_length=249)
    key_format = models.CharField(max_length=16, choices=FORMAT_CHOICES, default="auto")
    value_format = models.CharField(max_length=16, choices=FORMAT_CHOICES, default="auto")
    header_format = models.CharField(max_length=16, choices=FORMAT_CHOICES, default="auto")
    avro_schema = models.TextField(blank=True, default="", help_text="Avro schema (JSON) of the topic's values.")
    avro_key_schema = models.TextField(blank=True, default="", help_text="Avro schema (JSON) of the topic's keys.")
    protobuf_descriptor_set = models.BinaryField(blank=True, default=b"")
    protobuf_message_type = models.CharField(max_length=300, blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["cluster", "topic"], name="one_settings_row_per_topic")]


class RegisteredSchema(models.Model):
    """An Avro schema registered in the console under the id that Confluent's wire format
    (magic byte 0, then a 4-byte big-endian schema id) carries in front of each record."""

    schema_id = models.PositiveIntegerField(unique=True)
    subject = models.CharField(max_length=300)
    schema = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["schema_id"]


class MaskingRule(models.Model):
    """Masks part of a topic's values (and header values) for the viewer role.

    `json_field`: `pattern` is a dotted path (`card.number`, `items[*].ssn` is not supported)
    whose value is replaced; `regex`: every match of `pattern` is replaced."""

    JSON_FIELD, REGEX = "json_field", "regex"
    KINDS = [(JSON_FIELD, "JSON field"), (REGEX, "regular expression")]

    cluster = models.ForeignKey("clusters.Cluster", on_delete=models.CASCADE, related_name="+")
    topic = models.CharField(max_length=249)
    kind = models.CharField(max_length=16, choices=KINDS)
    pattern = models.CharField(max_length=500)
    replacement = models.CharField(max_length=100, default="***")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
