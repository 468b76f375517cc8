"""Websocket routes (Channels): live fragments (console.live.FragmentConsumer) and the message tail."""
from django.urls import path

from console.clusters.live import OVERVIEW
from console.live import FragmentConsumer
from console.messages.live import MessagesConsumer

websocket_urlpatterns: list = [
    path("ws/clusters/<int:cluster_id>/overview/", FragmentConsumer.as_asgi(fragment=OVERVIEW)),
    path("ws/clusters/<int:cluster_id>/topics/<str:name>/messages/", MessagesConsumer.as_asgi()),
]
