"""Console URL routes: pages under /clusters/<id>/..., the same data as JSON under /api/.

Each app routes its own pages (`urlpatterns`, in the app's namespace) and its own JSON API
(`api_urlpatterns`, gathered here in the "api" namespace) from its urls.py.
"""
from django.contrib.auth import views as auth_views
from django.urls import include, path

from console import web
from console.accounts import urls as accounts_urls
from console.acls import urls as acl_urls
from console.alerts import urls as alert_urls
from console.analytics import urls as analytics_urls
from console.brokers import urls as broker_urls
from console.clusters import urls as cluster_urls
from console.clusters import views as cluster_views
from console.groups import urls as group_urls
from console.messages import urls as message_urls
from console.messages import views as message_views
from console.quotas import urls as quota_urls
from console.schema_registry import urls as schema_registry_urls
from console.reassignments import urls as reassignment_urls
from console.share_groups import urls as share_group_urls
from console.topics import urls as topic_urls
from console.transactions import urls as transaction_urls

api = [
    *cluster_urls.api_urlpatterns,
    *broker_urls.api_urlpatterns,
    *topic_urls.api_urlpatterns,
    *reassignment_urls.api_urlpatterns,
    *analytics_urls.api_urlpatterns,
    *group_urls.api_urlpatterns,
    *share_group_urls.api_urlpatterns,
    *message_urls.api_urlpatterns,
    *transaction_urls.api_urlpatterns,
    *quota_urls.api_urlpatterns,
    *schema_registry_urls.api_urlpatterns,
    *accounts_urls.api_urlpatterns,
    *acl_urls.api_urlpatterns,
    *alert_urls.api_urlpatterns,
]

# Error pages render base.html with the request, so they keep the navigation (console/web.py).
handler404 = "console.web.not_found"
handler403 = "console.web.forbidden"
handler500 = "console.web.server_error"

urlpatterns = [
    path("", cluster_views.home, name="home"),
    path("favicon.ico", web.favicon, name="favicon"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include(accounts_urls.urlpatterns)),
    path("clusters/", include("console.clusters.urls")),
    path("clusters/<int:cluster_id>/brokers/", include("console.brokers.urls")),
    path("clusters/<int:cluster_id>/topics/", include("console.topics.urls")),
    path("clusters/<int:cluster_id>/analytics/", include("console.analytics.urls")),
    path("clusters/<int:cluster_id>/groups/", include("console.groups.urls")),
    path("clusters/<int:cluster_id>/share-groups/", include("console.share_groups.urls")),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages/", include("console.messages.urls")),
    path("schemas/", message_views.schema_list, name="schemas"),
    path("clusters/<int:cluster_id>/reassignments/", include("console.reassignments.urls")),
    path("clusters/<int:cluster_id>/transactions/", include("console.transactions.urls")),
    path("clusters/<int:cluster_id>/quotas/", include("console.quotas.urls")),
    path("clusters/<int:cluster_id>/schemas/", include("console.schema_registry.urls")),
    path("clusters/<int:cluster_id>/", include("console.acls.urls")),
    path("clusters/<int:cluster_id>/alerts/", include("console.alerts.urls")),
    path("metrics", include("console.metrics.urls")),
    path("api/", include((api, "api"))),
]
