from django.urls import path

from console.metrics import views

urlpatterns = [path("", views.metrics, name="metrics")]
