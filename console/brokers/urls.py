from django.urls import path

from console.brokers import apis, views

app_name = "brokers"
urlpatterns = [
    path("", views.broker_list, name="list"),
    path("<int:broker_id>/", views.broker_detail, name="detail"),
    path("<int:broker_id>/configs/<str:key>", views.broker_config_edit, name="config_edit"),
    path("<int:broker_id>/stop", views.broker_command, {"action": "stop"}, name="stop"),
    path("<int:broker_id>/start", views.broker_command, {"action": "start"}, name="start"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/brokers", apis.broker_list, name="brokers"),
    path("clusters/<int:cluster_id>/brokers/<int:broker_id>", apis.broker_detail, name="broker"),
]
