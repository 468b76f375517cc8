"""Websocket routes (Channels). Consumers stay thin: they call selectors and forward events."""
from django.urls import path

from console.clusters.live import OverviewConsumer
from console.reassignments.live import JobProgressConsumer

websocket_urlpatterns: list = [
    path("ws/clusters/<int:cluster_id>/overview/", OverviewConsumer.as_asgi()),
    path("ws/reassignments/<int:job_id>/", JobProgressConsumer.as_asgi()),
]
