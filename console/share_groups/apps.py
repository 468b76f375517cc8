from django.apps import AppConfig


class ShareGroupsConfig(AppConfig):
    name = "console.share_groups"
    label = "share_groups"

    def ready(self) -> None:
        from console.share_groups import live  # noqa: F401 - registers the share group page's live fragment
