"""Routes of the ACLs and Users pages (`urlpatterns`, under clusters/<id>/) and of their JSON API
(`api_urlpatterns`, under api/)."""
from django.urls import path

from console.acls import apis, views

app_name = "acls"
urlpatterns = [
    path("acls/", views.acl_list, name="list"),
    path("acls/export.csv", views.acl_export, name="export"),
    path("acls/add", views.acl_add, name="add"),
    path("acls/wizard", views.acl_wizard, name="wizard"),
    path("acls/import", views.acl_import, name="import"),
    path("acls/create", views.acl_create, name="create"),
    path("acls/delete", views.acl_delete, name="delete"),
    path("acls/principal", views.principal_view, name="principal"),
    path("users/", views.user_list, name="users"),
    path("users/save", views.user_save, name="user_save"),
    path("users/remove", views.user_remove, name="user_remove"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/acls", apis.acl_list, name="acls"),
    path("clusters/<int:cluster_id>/acls/create", apis.acl_create, name="acl_create"),
    path("clusters/<int:cluster_id>/acls/delete", apis.acl_delete, name="acl_delete"),
    path("clusters/<int:cluster_id>/acls/principal", apis.principal_permissions, name="acl_principal"),
    path("clusters/<int:cluster_id>/users", apis.user_list, name="users"),
    path("clusters/<int:cluster_id>/users/save", apis.user_save, name="user_save"),
]
