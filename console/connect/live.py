"""The Connect pages' live parts (console/live.py): a connector's state, tasks and actions, and
a Connect cluster's connectors, re-rendered by the Kafka cluster's live feed while a page
watches them and pushed when they change, so a task that fails or restarts shows without a
reload. A Connect that does not answer is told inside the part (the Kafka cluster's other live
parts go on); a connector Connect no longer knows closes its sockets.

Routes (console/routing.py): `ws/clusters/<id>/connect/<connect id>/connectors/<name>/` for
viewers, and `.../operate/` for operators, whose render carries the action buttons (a
fragment is rendered once for all its sockets, so the role is in the route, not the render).
`ws/clusters/<id>/connect/<connect id>/` is the connectors table of a Connect cluster's page.
"""
from __future__ import annotations

from django.template.loader import render_to_string

from console import live
from console.accounts.roles import OPERATOR
from console.clusters.selectors import cluster_get
from console.connect import selectors
from console.connect.confirmations import confirm_messages

CONNECTOR = "connect.connector"
CONNECTOR_OPERATE = "connect.connector.operate"
CONNECTORS = "connect.connectors"


class OperatorFragmentConsumer(live.FragmentConsumer):
    """The connector's live part with its actions: operators only."""

    minimum_role = OPERATOR


def _connector_html(*, cluster_id: int, connect_id: str, name: str, can_act: bool) -> str:
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=int(connect_id))
    detail = selectors.connector_live(connect=connect, name=name)
    return render_to_string("connect/_connector_live.html", {
        "cluster": cluster, "connect": connect, "detail": detail, "can_act": can_act,
        "confirm": confirm_messages(name=name)})


@live.fragment(CONNECTOR)
def connector_fragment(*, cluster_id: int, connect_id: str, name: str) -> str:
    return _connector_html(cluster_id=cluster_id, connect_id=connect_id, name=name, can_act=False)


@live.fragment(CONNECTOR_OPERATE)
def connector_operate_fragment(*, cluster_id: int, connect_id: str, name: str) -> str:
    return _connector_html(cluster_id=cluster_id, connect_id=connect_id, name=name, can_act=True)


@live.fragment(CONNECTORS)
def connectors_fragment(*, cluster_id: int, connect_id: str) -> str:
    cluster = cluster_get(cluster_id=cluster_id)
    connect = selectors.connect_cluster_get(cluster=cluster, connect_id=int(connect_id))
    view = selectors.connect_overview(cluster=cluster, connect=connect, timeout=selectors.LIVE_TIMEOUT)
    return render_to_string("connect/_connectors_live.html", {"cluster": cluster, "view": view})
