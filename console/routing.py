"""Websocket routes (Channels). Consumers stay thin: they call selectors and forward events."""
from django.urls import path

from console.clusters.live import OverviewConsumer

websocket_urlpatterns: list = [
    path("ws/clusters/<int:cluster_id>/overview/", OverviewConsumer.as_asgi()),
]
