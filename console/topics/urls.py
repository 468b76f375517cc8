from django.urls import path

from console.topics import apis, views

app_name = "topics"
urlpatterns = [
    path("", views.topic_list, name="list"),
    path("create", views.topic_create, name="create"),
    path("elect", views.topic_elect, name="elect_all"),
    path("<str:name>/", views.topic_detail, name="detail"),
    path("<str:name>/delete", views.topic_delete, name="delete"),
    path("<str:name>/delete-records", views.topic_delete_records, name="delete_records"),
    path("<str:name>/consumers", views.topic_consumers, name="consumers"),
    path("<str:name>/configs", views.topic_configs, name="configs"),
    path("<str:name>/configs/<str:key>", views.topic_config_edit, name="config_edit"),
    path("<str:name>/partitions", views.topic_add_partitions, name="add_partitions"),
    path("<str:name>/elect", views.topic_elect, name="elect"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/topics", apis.topic_list, name="topics"),
    path("clusters/<int:cluster_id>/topics/<str:name>", apis.topic_detail, name="topic"),
]
