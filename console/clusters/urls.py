from django.urls import path

from console.clusters import views

app_name = "clusters"
urlpatterns = [
    path("", views.cluster_list, name="list"),
    path("<int:cluster_id>/", views.overview, name="overview"),
]
