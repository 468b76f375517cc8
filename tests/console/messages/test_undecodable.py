"""A corrupt batch on disk never breaks a page: the records it can decode are shown, the rest as
one undecodable row with its offsets and the reason, and no bytes of it."""
from __future__ import annotations

from django.urls import reverse

from console.messages.selectors import BrowseQuery, message_browse, message_get
from tests.support.planted_batches import POISON_RECORDS


def test_browse_shows_the_records_it_cannot_decode_with_their_offset(poisoned_cluster, poisoned_engine):
    planted = poisoned_engine.offset
    page = message_browse(cluster=poisoned_cluster, topic=poisoned_engine.topic, mask=False,
                          query=BrowseQuery(start="offset", offset=planted - 2, count=6, partition=0))
    rows = {m.offset: m for m in page.messages}
    assert rows[planted - 2].value.text and not rows[planted - 2].undecodable      # read before it
    assert rows[planted].value.text == "fine"                           # the batch's first record decodes
    bad = [m for m in page.messages if m.undecodable]
    assert [m.offset for m in bad] == [planted + 1]                     # the rest of the batch: one row
    assert f"at offset {planted + POISON_RECORDS - 1} could not be decoded" in bad[0].undecodable
    assert bad[0].value.text is None and bad[0].headers == ()
    assert any(m.offset > planted + 1 and m.value.text.startswith("after-") for m in page.messages)   # and after


def test_one_offset_inside_the_bad_batch_is_shown_as_undecodable(poisoned_cluster, poisoned_engine):
    record, view, _ = message_get(cluster=poisoned_cluster, topic=poisoned_engine.topic, partition=0,
                                  offset=poisoned_engine.offset + 1, mask=True)
    assert record.offset == poisoned_engine.offset + 1 and record.value is None
    assert "could not be decoded" in view.undecodable and view.value.error == view.undecodable


def test_the_pages_answer_200_and_name_the_offset(poisoned_cluster, poisoned_engine, viewer_client):
    topic, planted = poisoned_engine.topic, poisoned_engine.offset
    html = viewer_client.get(reverse("messages:browse", args=[poisoned_cluster.pk, topic]),
                             {"start": "oldest", "count": 100})
    assert html.status_code == 200
    text = html.content.decode()
    assert f'data-offset="{planted + 1}" data-undecodable="true"' in text and "undecodable</span>" in text
    api = viewer_client.get(reverse("api:messages", args=[poisoned_cluster.pk, topic]), {"start": "oldest"})
    assert api.status_code == 200
    assert [m["offset"] for m in api.json()["messages"] if m["undecodable"]] == [planted + 1]
    detail = viewer_client.get(reverse("messages:detail", args=[poisoned_cluster.pk, topic, 0, planted + 1]))
    assert detail.status_code == 200 and "could not be decoded" in detail.content.decode()
