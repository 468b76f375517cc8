"""Share group pages, under /clusters/<id>/share-groups/. Group ids may hold any character, '/'
included: the id is a path segment run (`<path:>`), actions come after it, and the page ends
with a slash, as on the consumer groups' pages."""
from django.urls import path

from console.share_groups import apis, views

app_name = "share_groups"
urlpatterns = [
    path("<path:group_id>/reset", views.share_group_reset, name="reset"),
    path("<path:group_id>/delete-offsets", views.share_group_delete_offsets, name="delete_offsets"),
    path("<path:group_id>/delete", views.share_group_delete, name="delete"),
    path("<path:group_id>/configs", views.share_group_configs, name="configs"),
    path("<path:group_id>/", views.share_group_detail, name="detail"),
]

api_urlpatterns = [
    path("clusters/<int:cluster_id>/share-groups/<path:group_id>/reset-preview", apis.share_group_reset_preview,
         name="share_group_reset_preview"),
    path("clusters/<int:cluster_id>/share-groups/<path:group_id>/reset", apis.share_group_reset,
         name="share_group_reset"),
    path("clusters/<int:cluster_id>/share-groups/<path:group_id>/delete-offsets", apis.share_group_delete_offsets,
         name="share_group_delete_offsets"),
    path("clusters/<int:cluster_id>/share-groups/<path:group_id>/delete", apis.share_group_delete,
         name="share_group_delete"),
    path("clusters/<int:cluster_id>/share-groups/<path:group_id>/configs", apis.share_group_configs,
         name="share_group_configs"),
    path("clusters/<int:cluster_id>/share-groups/<path:group_id>/", apis.share_group_detail, name="share_group"),
]
