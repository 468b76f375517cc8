"""Group ids may hold any character, '/' included: the id is a path segment run (`<path:>`),
actions come after it, and the detail page ends with a slash so that `x/reset/` is the page
of a group named "x/reset" and `x/reset` the reset of group "x"."""
from django.urls import path

from console.groups import views

app_name = "groups"
urlpatterns = [
    path("", views.group_list, name="list"),
    path("<path:group_id>/reset", views.group_reset, name="reset"),
    path("<path:group_id>/delete-offsets", views.group_delete_offsets, name="delete_offsets"),
    path("<path:group_id>/delete", views.group_delete, name="delete"),
    path("<path:group_id>/", views.group_detail, name="detail"),
]
