"""GET /metrics: Prometheus's text format of every cluster's last observation (exposition.py).

Metrics name topics and groups, so the endpoint wants `Authorization: Bearer <token>` with the
token of the environment variable CONSOLE_SECRET_METRICS_TOKEN; without that variable set it
answers 404 (metrics are off). It never asks a cluster while answering: a scrape serves the
observations the process keeps, and starts a new one in the background when one is older
than METRICS_MAX_AGE_SECONDS.
"""
from __future__ import annotations

import hmac

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.views.decorators.http import require_GET
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from console.clusters.models import Cluster
from console.metrics import exposition
from console.metrics.selectors import observation_latest


@login_not_required
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    token = settings.METRICS_TOKEN
    if not token:
        return HttpResponse("Metrics are off: set CONSOLE_SECRET_METRICS_TOKEN.\n", status=404,
                            content_type="text/plain")
    offered = request.headers.get("Authorization", "")
    if not offered.startswith("Bearer ") or not hmac.compare_digest(offered[7:].encode(), token.encode()):
        answer = HttpResponse("A bearer token is required (Authorization: Bearer ...).\n", status=401,
                              content_type="text/plain")
        answer["WWW-Authenticate"] = 'Bearer realm="metrics"'
        return answer
    gzipped = "gzip" in request.headers.get("Accept-Encoding", "")
    chunks = exposition.exposition_chunks({c.name: observation_latest(cluster=c) for c in Cluster.objects.all()},
                                          gzipped=gzipped)
    answer = StreamingHttpResponse(chunks, content_type=CONTENT_TYPE_LATEST)
    answer["Content-Length"] = str(sum(len(c) for c in chunks))
    if gzipped:
        answer["Content-Encoding"] = "gzip"
    answer["Cache-Control"] = "no-store"
    return answer
