"""Group ids may hold any character, '/' included: the id is a path segment run (`<path:>`),
actions come after it, and the detail page ends with a slash so that `x/reset/` is the page
of a group named "x/reset" and `x/reset` the reset of group "x"."""
from django.urls import path

from console.groups import apis, views

app_name = "groups"
urlpatterns = [
    path("", views.group_list, name="list"),
    path("<path:group_id>/reset", views.group_reset, name="reset"),
    path("<path:group_id>/delete-offsets", views.group_delete_offsets, name="delete_offsets"),
    path("<path:group_id>/delete", views.group_delete, name="delete"),
    path("<path:group_id>/configs", views.group_configs, name="configs"),
    path("<path:group_id>/", views.group_detail, name="detail"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace; the group detail ends
# with a slash for the same reason as the page's.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/groups", apis.group_list, name="groups"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/reset-preview", apis.group_reset_preview,
         name="group_reset_preview"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/reset", apis.group_reset, name="group_reset"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/delete-offsets", apis.group_delete_offsets,
         name="group_delete_offsets"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/delete", apis.group_delete, name="group_delete"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/configs", apis.group_configs, name="group_configs"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/", apis.group_detail, name="group"),
]
