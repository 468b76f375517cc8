"""ASGI entry point: Django for HTTP, Channels for websockets (live updates)."""
import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402 - needs Django set up first
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from console.origin import SameOriginValidator  # noqa: E402

from console.routing import websocket_urlpatterns  # noqa: E402
from console.warmup import warm_up  # noqa: E402

warm_up()   # imports and templates now, not in the first request

application = ProtocolTypeRouter({
    "http": django_asgi_app,
    "websocket": SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
})
