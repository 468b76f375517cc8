"""The analytics pages update live: a socket on the topic page's fragment, over the real ASGI
stack and the real Redis channel layer, with polling switched off (LIVE_POLL_SECONDS=3600), gets
the what-if's answer pushed when the run finishes. Only the analytics.* events, sent after
commit, can bring it."""
from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.analytics.models import AnalyticsRun
from console.analytics.services import analytics_run_execute, what_if_request
from console.clusters.models import Cluster
from tests.console.analytics.test_runs_and_pages import write_snapshots
from tests.support.celery_worker import celery_broker

pytestmark = [pytest.mark.django_db(transaction=True, serialized_rollback=True), pytest.mark.timeout(600)]
WAIT = 120          # a bound for a hung consumer or Spark, not a performance threshold


async def receive_until(communicator, condition, what: str) -> str:
    while True:
        try:
            html = await communicator.receive_from(timeout=WAIT)
        except TimeoutError:
            raise AssertionError(f"the socket sent nothing new while waiting for {what}") from None
        if condition(html):
            return html


def test_a_finished_what_if_is_pushed_to_the_topic_page(spark, users, settings, tmp_path, redis_server):
    from console.asgi import application
    from console.settings import channel_layers

    settings.ANALYTICS_LAKE = str(tmp_path / "lake")
    settings.CHANNEL_LAYERS = channel_layers(redis_server.url)
    settings.LIVE_POLL_SECONDS = 3600
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    write_snapshots(settings.ANALYTICS_LAKE, cluster.pk)
    client = Client()
    client.force_login(users["viewer"])
    communicator = WebsocketCommunicator(
        application, f"/ws/clusters/{cluster.pk}/analytics/topics/orders/",
        headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1"),
                 (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())])

    def request_and_run() -> int:
        with celery_broker(redis_server.url):      # the queued task waits on Redis; this test runs it
            run = what_if_request(cluster=cluster, actor=users["operator"], topic="orders", retention_ms=None,
                                  retention_bytes=0)
        analytics_run_execute(run_id=run.pk, spark=spark)
        return run.pk

    async def scenario():
        assert (await communicator.connect(timeout=WAIT))[0]
        first = await communicator.receive_from(timeout=WAIT)
        assert "No what-if has been estimated for this topic yet." in first
        run_id = await asyncio.get_running_loop().run_in_executor(None, request_and_run)
        done = await receive_until(communicator, lambda html: "data-what-if-kept" in html, "the what-if's answer")
        await communicator.disconnect()
        return run_id, done

    run_id, html = async_to_sync(scenario)()
    assert AnalyticsRun.objects.get(pk=run_id).state == AnalyticsRun.DONE
    # retention.bytes = 0 on 2 x 18,000 bytes of 1 MiB segments: no segment is whole, nothing goes.
    assert 'data-what-if-kept="36000" data-what-if-freed="0"' in html


def test_analytics_routes_need_a_viewer(db, settings):
    from console.asgi import application
    cluster = Cluster.objects.create(name="lake only", bootstrap_servers="127.0.0.1:1")
    communicator = WebsocketCommunicator(application, f"/ws/clusters/{cluster.pk}/analytics/",
                                         headers=[(b"origin", b"http://127.0.0.1"), (b"host", b"127.0.0.1")])

    async def scenario():
        connected, _ = await communicator.connect(timeout=WAIT)
        return connected
    assert not async_to_sync(scenario)()
