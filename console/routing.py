"""Websocket routes (Channels). Consumers stay thin: they call selectors and forward events."""
from django.urls import path

from console.clusters.live import OverviewConsumer
from console.messages.live import MessagesConsumer

websocket_urlpatterns: list = [
    path("ws/clusters/<int:cluster_id>/overview/", OverviewConsumer.as_asgi()),
    path("ws/clusters/<int:cluster_id>/topics/<str:name>/messages/", MessagesConsumer.as_asgi()),
]
