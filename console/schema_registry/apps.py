from django.apps import AppConfig


class SchemaRegistryConfig(AppConfig):
    name = "console.schema_registry"
    label = "schema_registry"
    verbose_name = "Schema registry"
