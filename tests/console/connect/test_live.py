"""The Connect pages' live parts, as the cluster's live feed renders them, on a real worker:
a connector's state and tasks follow Connect, operators' renders carry the actions and viewers'
do not, a Connect that does not answer is told inside the part (the Kafka cluster's feed is not
marked unreachable), a connector Connect no longer knows closes its sockets, and a viewer's
socket cannot open the operators' route."""
from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.connect import services
from console.connect.live import connector_fragment, connector_operate_fragment, connectors_fragment
from console.connect.models import ConnectCluster
from console.errors import NotFound
from tests.console.connect.test_views import _create_counting, _running
from tests.console.conftest import make_topic
from tests.support.engine_process import free_port_range
from tests.support.waiting import wait_until


def test_a_connectors_live_part_follows_its_state_with_actions_for_operators_only(connect_row, cluster, operator_client,
                                                                                  users, unique_topic):
    topic = make_topic(cluster, unique_topic())
    _create_counting(operator_client, connect_row, "live-counting", topic, password="s3cret-live")
    _running(connect_row, "live-counting")
    kwargs = {"cluster_id": cluster.pk, "connect_id": str(connect_row.pk), "name": "live-counting"}
    viewer_html = connector_fragment(**kwargs)
    assert 'data-state="RUNNING"' in viewer_html and "<form" not in viewer_html
    operator_html = connector_operate_fragment(**kwargs)
    assert 'data-action="pause"' in operator_html and 'data-action="resume"' not in operator_html
    assert "csrfmiddlewaretoken" not in operator_html        # no request here: live.js adds the page's token
    services.connector_action(actor=users["operator"], connect=connect_row, name="live-counting", action="pause")
    paused = wait_until(lambda: (html := connector_operate_fragment(**kwargs)) and 'data-action="resume"' in html
                        and html, 60, message="the live part offers Resume")
    assert 'data-state="PAUSED"' in paused and 'data-action="pause"' not in paused
    assert 'data-connector="live-counting"' in connectors_fragment(cluster_id=cluster.pk,
                                                                   connect_id=str(connect_row.pk))
    services.connector_action(actor=users["operator"], connect=connect_row, name="live-counting", action="delete")
    with pytest.raises(NotFound):
        wait_until(lambda: connector_fragment(**kwargs) and None, 30, message="never")


def test_a_connect_that_does_not_answer_is_told_inside_the_live_part(cluster):
    dead = ConnectCluster.objects.create(cluster=cluster, name="dead connect",
                                         url=f"http://127.0.0.1:{free_port_range(1)}")
    kwargs = {"cluster_id": cluster.pk, "connect_id": str(dead.pk)}
    html = connector_fragment(**kwargs, name="anything")
    assert 'id="connector-error"' in html and "cannot be reached" in html
    assert "cannot be reached" in connectors_fragment(**kwargs)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)      # the feed reads on a thread of its own
def test_the_operators_route_refuses_a_viewers_socket(connect_row, cluster, users):
    from console.asgi import application

    def communicator(role: str, path: str) -> WebsocketCommunicator:
        client = Client()
        client.force_login(users[role])
        return WebsocketCommunicator(application, path, headers=[
            (b"origin", b"http://127.0.0.1:80"), (b"host", b"127.0.0.1"),
            (b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())])

    base = f"/ws/clusters/{cluster.pk}/connect/{connect_row.pk}/connectors/none-such/"
    viewer, operator = communicator("viewer", base + "operate/"), communicator("operator", base + "operate/")

    async def scenario():
        assert not (await viewer.connect(timeout=30))[0]
        assert (await operator.connect(timeout=30))[0]
        # The connector does not exist: its live part closes the socket.
        assert (await operator.receive_output(timeout=30))["type"] == "websocket.close"
    async_to_sync(scenario)()
