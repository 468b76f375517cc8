"""Console events reach the overview group through Redis: a listener of its own on the same
Redis (another connection, as another console process would have) hears them."""
import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels_redis.core import RedisChannelLayer

from console.live import cluster_group
from console.events import notify

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)


def test_a_console_event_is_published_on_redis_to_the_clusters_group(cluster, redis_channel_layer):
    async def scenario():
        listener = RedisChannelLayer(hosts=[redis_channel_layer.url])   # not the console's layer object
        channel = await listener.new_channel()
        await listener.group_add(cluster_group(cluster.pk), channel)
        try:
            await database_sync_to_async(notify)("topic.created", {"cluster": cluster.pk, "topic": "t"})
            return await asyncio.wait_for(listener.receive(channel), timeout=30)
        finally:
            await listener.group_discard(cluster_group(cluster.pk), channel)
            await listener.close_pools()
    assert async_to_sync(scenario)() == {"type": "console.event", "event": "topic.created"}
