"""The clusters app's tests run their Channels layer on a real Redis, as `make run` does, so the
live overview's events cross the same Redis pub/sub a deployment uses (not the in-memory layer
the settings fall back to without REDIS_URL)."""
import pytest
from channels.layers import get_channel_layer

from console.settings import channel_layers


@pytest.fixture(autouse=True)
def redis_channel_layer(settings, redis_server):
    settings.CHANNEL_LAYERS = channel_layers(redis_server.url)
    assert type(get_channel_layer()).__name__ == "RedisChannelLayer"
    return redis_server
