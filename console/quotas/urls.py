from django.urls import path

from console.quotas import apis, views

app_name = "quotas"
urlpatterns = [
    path("", views.quota_list, name="list"),
    path("set", views.quota_set, name="set"),
    path("remove", views.quota_remove, name="remove"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/quotas", apis.quota_list, name="quotas"),
    path("clusters/<int:cluster_id>/quotas/preview", apis.quota_preview, name="quota_preview"),
    path("clusters/<int:cluster_id>/quotas/set", apis.quota_set, name="quota_set"),
    path("clusters/<int:cluster_id>/quotas/remove", apis.quota_remove, name="quota_remove"),
]
