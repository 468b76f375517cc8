"""Websocket routes (Channels). Consumers stay thin: they call selectors and forward events."""
websocket_urlpatterns: list = []
