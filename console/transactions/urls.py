from django.urls import path

from console.transactions import apis, views

app_name = "transactions"
urlpatterns = [
    path("", views.transaction_list, name="list"),
    path("abort", views.transaction_abort, name="abort"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/transactions", apis.transaction_list, name="transactions"),
    path("clusters/<int:cluster_id>/transactions/abort", apis.transaction_abort, name="transaction_abort"),
]
