"""Console URL routes: pages under /clusters/<id>/..., the same data as JSON under /api/."""
from django.contrib.auth import views as auth_views
from django.urls import include, path

from console.accounts import views as accounts_views
from console.acls import urls as acl_urls
from console.analytics import apis as analytics_apis
from console.brokers import apis as broker_apis
from console.clusters import apis as cluster_apis
from console.clusters import views as cluster_views
from console.groups import apis as group_apis
from console.messages import apis as message_apis
from console.messages import views as message_views
from console.quotas import apis as quota_apis
from console.reassignments import apis as reassignment_apis
from console.topics import apis as topic_apis
from console.transactions import apis as transaction_apis

api = [
    path("clusters", cluster_apis.cluster_list, name="clusters"),
    path("clusters/<int:cluster_id>/overview", cluster_apis.overview, name="overview"),
    path("clusters/<int:cluster_id>/brokers", broker_apis.broker_list, name="brokers"),
    path("clusters/<int:cluster_id>/brokers/<int:broker_id>", broker_apis.broker_detail, name="broker"),
    path("clusters/<int:cluster_id>/topics", topic_apis.topic_list, name="topics"),
    path("clusters/<int:cluster_id>/reassignments", reassignment_apis.job_list, name="reassignments"),
    path("clusters/<int:cluster_id>/reassignments/<int:job_id>", reassignment_apis.job_detail, name="reassignment"),
    path("clusters/<int:cluster_id>/topics/<str:name>", topic_apis.topic_detail, name="topic"),
    path("clusters/<int:cluster_id>/analytics", analytics_apis.cluster_analytics, name="analytics"),
    path("clusters/<int:cluster_id>/analytics/group-status", analytics_apis.group_statuses, name="group_statuses"),
    path("clusters/<int:cluster_id>/analytics/groups/<path:group_id>", analytics_apis.group_analytics,
         name="group_analytics"),
    path("clusters/<int:cluster_id>/analytics/topics/<str:topic>", analytics_apis.topic_analytics,
         name="topic_analytics"),
    path("clusters/<int:cluster_id>/analytics/topics/<str:topic>/what-if", analytics_apis.topic_what_if,
         name="topic_what_if"),
    path("clusters/<int:cluster_id>/groups", group_apis.group_list, name="groups"),
    # Group ids may hold '/': see console/groups/urls.py for why the detail ends with a slash.
    path("clusters/<int:cluster_id>/groups/<path:group_id>/reset-preview", group_apis.group_reset_preview,
         name="group_reset_preview"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/reset", group_apis.group_reset, name="group_reset"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/delete-offsets", group_apis.group_delete_offsets,
         name="group_delete_offsets"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/delete", group_apis.group_delete, name="group_delete"),
    path("clusters/<int:cluster_id>/groups/<path:group_id>/", group_apis.group_detail, name="group"),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages", message_apis.message_browse, name="messages"),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages/search", message_apis.message_search,
         name="message_search"),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages/<int:partition>/<int:offset>",
         message_apis.message_detail, name="message"),
    path("clusters/<int:cluster_id>/transactions", transaction_apis.transaction_list, name="transactions"),
    path("clusters/<int:cluster_id>/transactions/abort", transaction_apis.transaction_abort,
         name="transaction_abort"),
    path("clusters/<int:cluster_id>/quotas", quota_apis.quota_list, name="quotas"),
    path("clusters/<int:cluster_id>/quotas/preview", quota_apis.quota_preview, name="quota_preview"),
    path("clusters/<int:cluster_id>/quotas/set", quota_apis.quota_set, name="quota_set"),
    path("clusters/<int:cluster_id>/quotas/remove", quota_apis.quota_remove, name="quota_remove"),
    path("audit", accounts_views.audit_log_api, name="audit"),
    path("clusters/<int:cluster_id>/", include((acl_urls.api_urlpatterns, "acls_api"))),
]

# Error pages render base.html with the request, so they keep the navigation (console/web.py).
handler404 = "console.web.not_found"
handler403 = "console.web.forbidden"
handler500 = "console.web.server_error"

urlpatterns = [
    path("", cluster_views.home, name="home"),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("audit/", accounts_views.audit_log, name="audit_log"),
    path("clusters/", include("console.clusters.urls")),
    path("clusters/<int:cluster_id>/brokers/", include("console.brokers.urls")),
    path("clusters/<int:cluster_id>/topics/", include("console.topics.urls")),
    path("clusters/<int:cluster_id>/analytics/", include("console.analytics.urls")),
    path("clusters/<int:cluster_id>/groups/", include("console.groups.urls")),
    path("clusters/<int:cluster_id>/topics/<str:name>/messages/", include("console.messages.urls")),
    path("schemas/", message_views.schema_list, name="schemas"),
    path("clusters/<int:cluster_id>/reassignments/", include("console.reassignments.urls")),
    path("clusters/<int:cluster_id>/transactions/", include("console.transactions.urls")),
    path("clusters/<int:cluster_id>/quotas/", include("console.quotas.urls")),
    path("clusters/<int:cluster_id>/", include("console.acls.urls")),
    path("api/", include((api, "api"))),
]
