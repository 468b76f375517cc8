from django.urls import path

from console.analytics import views

app_name = "analytics"
urlpatterns = [
    path("", views.cluster_analytics, name="cluster"),
    path("run", views.run_now, name="run"),
    path("groups/<path:group_id>/", views.group_analytics, name="group"),
    path("topics/<str:topic>/", views.topic_analytics, name="topic"),
    path("topics/<str:topic>/what-if", views.what_if, name="what_if"),
]
