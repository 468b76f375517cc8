"""Open the Kafka gateway for a cluster row, with the timeouts from settings."""
from contextlib import AbstractContextManager

from django.conf import settings

from console.clusters.models import Cluster
from console.kafka_gateway import Gateway, open_gateway


def cluster_gateway(cluster: Cluster) -> AbstractContextManager[Gateway]:
    return open_gateway(cluster.connection_settings(), request_timeout_ms=settings.KAFKA_REQUEST_TIMEOUT_MS,
                        bootstrap_timeout_ms=settings.KAFKA_BOOTSTRAP_TIMEOUT_MS,
                        metadata_max_age=settings.KAFKA_METADATA_MAX_AGE_SECONDS)
