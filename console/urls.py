"""Console URL routes. Pages arrive with the console issue."""
urlpatterns: list = []
