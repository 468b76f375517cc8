from django.urls import path

from console.reassignments import apis, views

app_name = "reassignments"
urlpatterns = [
    path("", views.job_list, name="list"),
    path("generate", views.plan_generate, name="generate"),
    path("import", views.plan_import, name="import"),
    path("schedules/create", views.schedule_create, name="schedule_create"),
    path("schedules/<int:schedule_id>/edit", views.schedule_edit, name="schedule_edit"),
    path("schedules/<int:schedule_id>/delete", views.schedule_delete, name="schedule_delete"),
    path("<int:job_id>/", views.job_detail, name="detail"),
    path("<int:job_id>/run", views.job_run, name="run"),
    path("<int:job_id>/pause", views.job_pause, name="pause"),
    path("<int:job_id>/resume", views.job_resume, name="resume"),
    path("<int:job_id>/cancel", views.job_cancel, name="cancel"),
    path("<int:job_id>/edit", views.move_edit, name="edit"),
    path("<int:job_id>/export/<str:which>.json", views.job_export, name="export"),
]

# The JSON API, under /api/ (console/urls.py), in the "api" namespace.
api_urlpatterns = [
    path("clusters/<int:cluster_id>/reassignments", apis.job_list, name="reassignments"),
    path("clusters/<int:cluster_id>/reassignments/<int:job_id>", apis.job_detail, name="reassignment"),
]
