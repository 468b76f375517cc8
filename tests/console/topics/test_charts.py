"""The topic page's Plotly chart: messages per partition, from the offsets the page shows."""
from django.urls import reverse

from tests.console.brokers.test_charts import chart_in
from tests.console.conftest import make_topic
from tests.support.partition_io import send_values


def test_the_messages_chart_counts_each_partitions_messages(cluster, engine_cluster, viewer_client, unique_topic):
    name = make_topic(cluster, unique_topic(), partitions=3)
    send_values(engine_cluster.bootstrap, name, [b"a"] * 5, partition=0)
    send_values(engine_cluster.bootstrap, name, [b"b"] * 2, partition=2)

    html = viewer_client.get(reverse("topics:detail", args=[cluster.pk, name])).content.decode()

    (messages,) = chart_in(html, "partition-messages-data")["data"]
    assert (list(messages["x"]), list(messages["y"])) == (["0", "1", "2"], [5, 0, 2])
