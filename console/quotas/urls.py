from django.urls import path

from console.quotas import views

app_name = "quotas"
urlpatterns = [
    path("", views.quota_list, name="list"),
    path("set", views.quota_set, name="set"),
    path("remove", views.quota_remove, name="remove"),
]
