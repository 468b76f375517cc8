from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ClustersConfig(AppConfig):
    """Kafka clusters the console manages, and the cluster overview."""

    name = "console.clusters"
    label = "clusters"

    def ready(self) -> None:
        post_migrate.connect(_register_bundled_engine, sender=self)
        from console.clusters import live  # noqa: F401 - connects the live overview's event receiver


def _register_bundled_engine(sender, using="default", **kwargs) -> None:
    """After every migrate: the bundled engine is a cluster row, at ENGINE_BOOTSTRAP."""
    from django.conf import settings

    from console.clusters.services import cluster_register_bundled

    cluster_register_bundled(bootstrap_servers=settings.ENGINE_BOOTSTRAP, follow=settings.ENGINE_BOOTSTRAP_FROM_ENV,
                             using=using)
