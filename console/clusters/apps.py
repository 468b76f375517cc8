from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ClustersConfig(AppConfig):
    """Kafka clusters the console manages, and the cluster overview."""

    name = "console.clusters"
    label = "clusters"

    def ready(self) -> None:
        post_migrate.connect(register_bundled_engine, sender=self)
        from console.clusters import live  # noqa: F401 - connects the live overview's event receiver


def register_bundled_engine(sender=None, using="default", **kwargs) -> None:
    """After every migrate: the bundled engine is a cluster row, at ENGINE_BOOTSTRAP, logged in as
    ENGINE_SECURITY_PROTOCOL and ENGINE_SASL_* say."""
    from django.conf import settings

    from console.clusters.services import cluster_register_bundled

    cluster_register_bundled(bootstrap_servers=settings.ENGINE_BOOTSTRAP, follow=settings.ENGINE_BOOTSTRAP_FROM_ENV,
                             using=using, login=bundled_login())


def bundled_login() -> dict[str, str]:
    """The bundled engine's security is the stack's (`make run` or `make run SECURE=1`), not an edit's."""
    from django.conf import settings

    return {"security_protocol": settings.ENGINE_SECURITY_PROTOCOL, "sasl_mechanism": settings.ENGINE_SASL_MECHANISM,
            "sasl_username": settings.ENGINE_SASL_USERNAME, "sasl_password_env": settings.ENGINE_SASL_PASSWORD_ENV}
