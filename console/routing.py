"""Websocket routes (Channels): each is a live fragment, served by console.live.FragmentConsumer."""
from django.urls import path

from console.clusters.live import OVERVIEW
from console.live import FragmentConsumer

websocket_urlpatterns: list = [
    path("ws/clusters/<int:cluster_id>/overview/", FragmentConsumer.as_asgi(fragment=OVERVIEW)),
]
