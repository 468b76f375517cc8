from django.urls import path

from console.clusters import views

app_name = "clusters"
urlpatterns = [
    path("", views.cluster_list, name="list"),
    path("add", views.cluster_add, name="add"),
    path("<int:cluster_id>/edit", views.cluster_edit, name="edit"),
    path("<int:cluster_id>/remove", views.cluster_remove, name="remove"),
    path("<int:cluster_id>/", views.overview, name="overview"),
]
