from django.apps import AppConfig


class AclsConfig(AppConfig):
    """Kafka ACLs (KIP-140) and SCRAM users (KIP-554): list, filter, create, delete, import, export;
    a principal's effective permissions. No models: the cluster owns its ACLs and users."""

    name = "console.acls"
    label = "acls"
