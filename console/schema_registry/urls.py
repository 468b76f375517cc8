from django.urls import path

from console.schema_registry import apis, views

app_name = "schema_registry"
urlpatterns = [
    path("", views.schema_list, name="list"),
    path("configure", views.registry_configure, name="configure"),
    path("register", views.schema_register, name="register"),
    path("compatibility", views.level_set, name="level"),
    path("mode", views.mode_set, name="mode"),
    path("delete", views.schema_delete, name="delete"),
    # Subjects may hold any character: the URL carries it percent-encoded, and the page ends with a slash.
    path("subjects/<path:subject>/", views.subject_detail, name="subject"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/schemas", apis.subjects, name="schemas"),
    path("clusters/<int:cluster_id>/schemas/subjects/<path:subject>/", apis.subject, name="schema_subject"),
]
