from django.urls import path

from console.alerts import apis, views

app_name = "alerts"
urlpatterns = [
    path("", views.alert_list, name="list"),
    path("rules/add", views.rule_edit, name="rule_add"),
    path("rules/<int:rule_id>/edit", views.rule_edit, name="rule_edit"),
    path("rules/<int:rule_id>/delete", views.rule_delete, name="rule_delete"),
    path("receivers/add", views.receiver_add, name="receiver_add"),
    path("receivers/<int:receiver_id>/delete", views.receiver_delete, name="receiver_delete"),
    path("silences/add", views.silence_add, name="silence_add"),
    path("silences/<int:silence_id>/end", views.silence_end, name="silence_end"),
    path("<int:alert_id>/acknowledge", views.alert_acknowledge, name="acknowledge"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/alerts", apis.alerts_api, name="alerts"),
]
