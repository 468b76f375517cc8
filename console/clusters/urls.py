from django.urls import path

from console.clusters import apis, views

app_name = "clusters"
urlpatterns = [
    path("", views.cluster_list, name="list"),
    path("add", views.cluster_add, name="add"),
    path("<int:cluster_id>/edit", views.cluster_edit, name="edit"),
    path("<int:cluster_id>/remove", views.cluster_remove, name="remove"),
    path("<int:cluster_id>/", views.overview, name="overview"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters", apis.cluster_list, name="clusters"),
    path("clusters/<int:cluster_id>/overview", apis.overview, name="overview"),
]
