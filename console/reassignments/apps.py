from django.apps import AppConfig


class ReassignmentsConfig(AppConfig):
    name = "console.reassignments"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Receivers: progress events to the job's websocket group; a starting worker resumes jobs.
        from console.reassignments import live, tasks  # noqa: F401
