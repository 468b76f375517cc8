from django.urls import path

from console.analytics import apis, views

app_name = "analytics"
urlpatterns = [
    path("", views.cluster_analytics, name="cluster"),
    path("run", views.run_now, name="run"),
    path("groups/<path:group_id>/", views.group_analytics, name="group"),
    path("topics/<str:topic>/", views.topic_analytics, name="topic"),
    path("topics/<str:topic>/what-if", views.what_if, name="what_if"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/analytics", apis.cluster_analytics, name="analytics"),
    path("clusters/<int:cluster_id>/analytics/group-status", apis.group_statuses, name="group_statuses"),
    path("clusters/<int:cluster_id>/analytics/groups/<path:group_id>", apis.group_analytics,
         name="group_analytics"),
    path("clusters/<int:cluster_id>/analytics/topics/<str:topic>", apis.topic_analytics, name="topic_analytics"),
    path("clusters/<int:cluster_id>/analytics/topics/<str:topic>/what-if", apis.topic_what_if,
         name="topic_what_if"),
]
