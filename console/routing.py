"""Websocket routes (Channels): live fragments (console.live.FragmentConsumer) and the message tail."""
from django.urls import path

from console.alerts.live import BADGE as ALERTS_BADGE
from console.analytics import live as analytics_live
from console.clusters.live import OVERVIEW
from console.connect import live as connect_live
from console.groups.live import GROUP_FRAGMENT
from console.live import FragmentConsumer
from console.messages.live import MessagesConsumer
from console.reassignments.live import JobProgressConsumer
from console.share_groups.live import SHARE_GROUP_FRAGMENT

websocket_urlpatterns: list = [
    path("ws/clusters/<int:cluster_id>/overview/", FragmentConsumer.as_asgi(fragment=OVERVIEW)),
    path("ws/clusters/<int:cluster_id>/alerts/badge/", FragmentConsumer.as_asgi(fragment=ALERTS_BADGE)),
    # Group ids may hold '/': the page puts the id percent-encoded, the server sees it decoded.
    path("ws/clusters/<int:cluster_id>/groups/<path:group_id>/", FragmentConsumer.as_asgi(fragment=GROUP_FRAGMENT)),
    path("ws/clusters/<int:cluster_id>/share-groups/<path:group_id>/",
         FragmentConsumer.as_asgi(fragment=SHARE_GROUP_FRAGMENT)),
    path("ws/clusters/<int:cluster_id>/topics/<str:name>/messages/", MessagesConsumer.as_asgi()),
    path("ws/reassignments/<int:job_id>/", JobProgressConsumer.as_asgi()),
    path("ws/clusters/<int:cluster_id>/connect/<int:connect_id>/",
         FragmentConsumer.as_asgi(fragment=connect_live.CONNECTORS)),
    path("ws/clusters/<int:cluster_id>/connect/<int:connect_id>/connectors/<str:name>/",
         FragmentConsumer.as_asgi(fragment=connect_live.CONNECTOR)),
    path("ws/clusters/<int:cluster_id>/connect/<int:connect_id>/connectors/<str:name>/operate/",
         connect_live.OperatorFragmentConsumer.as_asgi(fragment=connect_live.CONNECTOR_OPERATE)),
    path("ws/clusters/<int:cluster_id>/analytics/", FragmentConsumer.as_asgi(fragment=analytics_live.CLUSTER)),
    path("ws/clusters/<int:cluster_id>/analytics/topics/<str:topic>/",
         FragmentConsumer.as_asgi(fragment=analytics_live.TOPIC)),
    path("ws/clusters/<int:cluster_id>/analytics/groups/<str:resolution>/<path:group_id>/",
         FragmentConsumer.as_asgi(fragment=analytics_live.GROUP)),
]
