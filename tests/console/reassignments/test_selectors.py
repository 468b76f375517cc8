"""Reads for a job's page: how long it ran and when it ended, and what the per-broker columns
count. The job rows are written straight into the database: nothing here asks a cluster."""
from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from console.clusters.models import Cluster
from console.reassignments import selectors
from console.reassignments.models import Reassignment

pytestmark = pytest.mark.django_db
T0 = dt.datetime(2026, 11, 27, 6, 0, tzinfo=dt.timezone.utc)
BROKER = {"broker": 2, "replicas_before": 0, "replicas_after": 3, "leaders_before": 0, "leaders_after": 1,
          "bytes_before": 0, "bytes_after": 9_543_680, "bytes_in": 9_543_680, "bytes_out": 0}


@pytest.fixture
def offline():
    return Cluster.objects.create(name="offline", bootstrap_servers="127.0.0.1:1")


def job(cluster, state: str, **fields) -> Reassignment:
    return Reassignment.objects.create(cluster=cluster, name=f"fill broker 2 ({state})", scenario="add", state=state,
                                       summary={"moves": 3, "replica_moves": 3, "bytes_to_copy": 9_543_680,
                                                "leadership_changes": 1, "brokers": [BROKER]}, **fields)


def test_a_finished_job_took_from_its_start_to_its_end(offline):
    done = job(offline, Reassignment.DONE, started_at=T0, finished_at=T0 + dt.timedelta(minutes=2, seconds=5))
    assert selectors.job_timing(job=done) == selectors.Timing(
        started_at=T0, finished_at=T0 + dt.timedelta(minutes=2, seconds=5), elapsed_seconds=125.0, finished=True)
    running = job(offline, Reassignment.RUNNING, started_at=T0)
    timing = selectors.job_timing(job=running, now=T0 + dt.timedelta(seconds=30))
    assert (timing.elapsed_seconds, timing.finished_at, timing.finished) == (30.0, None, False)
    never = job(offline, Reassignment.CANCELLED, finished_at=T0)            # cancelled while scheduled
    assert selectors.job_timing(job=never) == selectors.Timing(None, T0, None, True)
    assert selectors.job_timing(job=job(offline, Reassignment.DRAFT)).elapsed_seconds is None


def test_a_done_job_shows_how_long_it_took_and_when_it_ended_not_an_eta(offline, viewer_client):
    done = job(offline, Reassignment.DONE, started_at=T0, finished_at=T0 + dt.timedelta(minutes=2, seconds=5))
    page = viewer_client.get(f"/clusters/{offline.pk}/reassignments/{done.pk}/").content.decode()
    timing = page[page.index('id="job-timing"'):]
    timing = timing[:timing.index("</p>")]
    assert 'id="job-elapsed" data-seconds="125.0">2 min 5 s</strong>' in timing
    assert f'<time datetime="{(T0 + dt.timedelta(minutes=2, seconds=5)).isoformat()}" data-when' in timing
    assert "ETA" not in timing and 'id="job-eta"' not in page
    assert f'id="job-started"><time datetime="{T0.isoformat()}"' in page
    assert "data-snapshot-region" in page[page.index('<span id="job-timing"'):][:80]   # fetched again at the end


def test_a_running_job_shows_its_eta_and_when_it_started(offline, viewer_client):
    running = job(offline, Reassignment.RUNNING, started_at=timezone.now(), throttle_bytes_per_sec=1_048_576,
                  bytes_total=9_543_680)
    page = viewer_client.get(f"/clusters/{offline.pk}/reassignments/{running.pk}/").content.decode()
    timing = page[page.index('id="job-timing"'):]
    assert "ETA <span id=\"job-eta\">9.1 s</span>" in timing[:timing.index("</p>")]
    assert 'id="job-elapsed"' not in page and 'id="job-started">' in page


def test_the_per_broker_bytes_columns_say_what_they_count(offline, viewer_client):
    draft = job(offline, Reassignment.DRAFT)
    page = viewer_client.get(f"/clusters/{offline.pk}/reassignments/{draft.pk}/").content.decode()
    heads = page[page.index('<table class="data" id="brokers">'):]
    heads = heads[:heads.index("</thead>")]
    assert ">In<" not in heads and ">Out<" not in heads
    assert 'title="Bytes this broker copies in: the size of each partition it gets a new replica of' in heads
    assert 'title="Bytes this broker sends out as the current leader of partitions that get new replicas' in heads
    assert ">Copied in</span>" in heads and ">Sent out</span>" in heads
