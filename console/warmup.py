"""What a console process does once at start, before it serves: import every view (and with
them the selectors, the gateway and kafka-python's protocol classes) and compile every page
template. Django does both lazily on the first request, which then cost ~0.5 s more than the
next ones (benchmarks/console_pages.py measures each page's first request in a fresh process).

Then, when the fleet-scale caches are on (console.kafka_gateway.cache), it fills them for
every cluster, all clusters at once: the all-topics metadata, the log dir sizes, the
groups' lag, the overview's health figures and the partitions' open transactions (and, when
/metrics is on, each cluster's first observation with its exposition). At 40,000 partitions
the first request would otherwise pay for the first metadata answer (up to ~1 s when the cluster has to build
it) or find the sizes, lags or transactions still being collected. Start-up waits for that
at most CONSOLE_WARMUP_WAIT_SECONDS; a cluster that is slower or down goes on filling in the
background, and its pages behave as without the warm-up (the first request waits for the
fetch in flight, never a second one).

Called by console/asgi.py after Django is set up; `runserver` imports the URLconf at start
anyway (its system checks do).
"""
from __future__ import annotations

import gc
import logging
import threading
import time

from django.conf import settings
from django.db import DatabaseError
from django.template import TemplateDoesNotExist, TemplateSyntaxError
from django.template.loader import get_template
from django.urls import get_resolver

logger = logging.getLogger(__name__)


def warm_up() -> None:
    """Then freeze what start-up built (modules, templates, settings: long-lived) out of the
    cyclic GC's walks, as CPython advises: full collections then walk only what requests add."""
    get_resolver().url_patterns          # imports console.urls: every view, selector and gateway module
    for directory in settings.TEMPLATES[0]["DIRS"]:
        for path in sorted(directory.rglob("*.html")):
            try:
                get_template(path.relative_to(directory).as_posix())   # cached by Django's cached loader
            except (TemplateDoesNotExist, TemplateSyntaxError):   # a template only an include can render
                continue
    warm_cluster_caches(wait_seconds=settings.CONSOLE_WARMUP_WAIT_SECONDS)
    gc.freeze()


def warm_cluster_caches(*, wait_seconds: float) -> list[threading.Thread]:
    """Fill each cluster's caches on a thread of its own; wait for them up to `wait_seconds`
    in all. Nothing to do when the caches are off (max age 0, as in the tests)."""
    if settings.KAFKA_METADATA_MAX_AGE_SECONDS <= 0:
        return []
    from console.clusters.models import Cluster
    try:
        clusters = list(Cluster.objects.all())
    except DatabaseError:          # not migrated yet: nothing to warm
        return []
    deadline = time.monotonic() + wait_seconds
    threads = [threading.Thread(target=_warm_cluster, args=(cluster, deadline), name=f"warm-up-{cluster.pk}",
                                daemon=True) for cluster in clusters]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return threads


def _warm_cluster(cluster, deadline: float) -> None:
    from console.clusters.gateway import cluster_gateway
    from console.kafka_gateway import GatewayError
    from console.kafka_gateway.cluster_health import cluster_health
    from console.kafka_gateway.group_lag import group_lags
    from console.kafka_gateway.log_dirs import log_dir_totals
    from console.kafka_gateway.transaction_producers import open_transactions

    try:
        with cluster_gateway(cluster) as gw:
            metadata = gw.metadata(cached=True)
            # A max age of 0 means each page reads them itself: nothing to keep.
            if settings.LOG_DIR_SIZES_MAX_AGE_SECONDS > 0:
                log_dir_totals(gw, [b.node_id for b in metadata.brokers],
                               max_age=settings.LOG_DIR_SIZES_MAX_AGE_SECONDS,
                               wait_first=max(0.0, deadline - time.monotonic()))
            if settings.GROUP_LAG_MAX_AGE_SECONDS > 0:
                group_lags(gw, max_age=settings.GROUP_LAG_MAX_AGE_SECONDS,
                           wait_first=max(0.0, deadline - time.monotonic()))
            if settings.CLUSTER_HEALTH_MAX_AGE_SECONDS > 0:
                cluster_health(gw, max_age=settings.CLUSTER_HEALTH_MAX_AGE_SECONDS,
                               wait_first=max(0.0, deadline - time.monotonic()))
            if settings.TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS > 0 and gw.transactions.supported():
                open_transactions(gw, max_age=settings.TRANSACTIONS_PRODUCERS_MAX_AGE_SECONDS,
                                  wait_first=max(0.0, deadline - time.monotonic()))
        # /metrics on: the first observation (and its exposition), so the first scrape has it.
        if settings.METRICS_TOKEN and settings.METRICS_MAX_AGE_SECONDS > 0:
            from console.metrics.selectors import observation_latest
            observation_latest(cluster=cluster, wait_first=max(0.0, deadline - time.monotonic()))
    except GatewayError as exc:     # a cluster that is down: its pages say so when asked
        logger.info("warm-up of cluster %s skipped: %s", cluster.name, exc)
