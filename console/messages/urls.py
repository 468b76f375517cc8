from django.urls import path

from console.messages import apis, views

app_name = "messages"
urlpatterns = [
    path("", views.message_browse, name="browse"),
    path("search", views.message_search, name="search"),
    path("tail", views.message_tail, name="tail"),
    path("export", views.message_export, name="export"),
    path("produce", views.message_produce, name="produce"),
    path("settings", views.message_settings, name="settings"),
    path("settings/masking", views.masking_rule_add, name="masking_add"),
    path("settings/masking/<int:rule_id>/delete", views.masking_rule_delete, name="masking_delete"),
    path("<int:partition>/<int:offset>/", views.message_detail, name="detail"),
    path("<int:partition>/<int:offset>/raw", views.message_raw, name="raw"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/topics/<str:name>/messages", apis.message_browse, name="messages"),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages/search", apis.message_search,
         name="message_search"),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages/<int:partition>/<int:offset>",
         apis.message_detail, name="message"),
]
