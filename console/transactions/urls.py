from django.urls import path

from console.transactions import views

app_name = "transactions"
urlpatterns = [
    path("", views.transaction_list, name="list"),
    path("abort", views.transaction_abort, name="abort"),
]
