"""The audit log: the page at /audit/ and its JSON twin under /api/ (both outside any cluster)."""
from django.urls import path

from console.accounts import apis, views

urlpatterns = [
    path("audit/", views.audit_log, name="audit_log"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("audit", apis.audit_log, name="audit"),
    path("whoami", apis.whoami, name="whoami"),
]
