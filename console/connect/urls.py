from django.urls import path

from console.connect import apis, views

app_name = "connect"
urlpatterns = [
    path("", views.connect_list, name="list"),
    path("add", views.connect_add, name="add"),
    path("<int:connect_id>/", views.connect_cluster, name="cluster"),
    path("<int:connect_id>/edit", views.connect_edit, name="edit"),
    path("<int:connect_id>/remove", views.connect_remove, name="remove"),
    path("<int:connect_id>/new", views.connector_new, name="new"),
    path("<int:connect_id>/connectors/<str:name>/", views.connector_detail, name="connector"),
    path("<int:connect_id>/connectors/<str:name>/config", views.connector_config, name="config"),
    path("<int:connect_id>/connectors/<str:name>/action", views.connector_action, name="action"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/connect", apis.connect_list, name="connect"),
    path("clusters/<int:cluster_id>/connect/<int:connect_id>/connectors", apis.connector_create,
         name="connect_create"),
    path("clusters/<int:cluster_id>/connect/<int:connect_id>/connectors/<str:name>", apis.connector_detail,
         name="connect_connector"),
    path("clusters/<int:cluster_id>/connect/<int:connect_id>/connectors/<str:name>/config", apis.connector_config,
         name="connect_config"),
    path("clusters/<int:cluster_id>/connect/<int:connect_id>/connectors/<str:name>/<str:action>",
         apis.connector_action, name="connect_action"),
]
