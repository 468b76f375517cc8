"""Console events: what services announce after a change commits.

Services call `notify_on_commit(event, payload)`; Zulip's rule applies: an event goes out
only with `transaction.on_commit`, so nobody hears about a change that was rolled back.
`notify` sends the `console_event` signal; the live-update layer (a Channels consumer group)
connects a receiver to it. Event names are `<entity>.<action>` ("topic.created",
"broker.stopped"); payloads are small JSON-able dicts with at least the cluster id.
"""
from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

console_event = Signal()  # sender: the module that emitted it; kwargs: event, payload


def notify(event: str, payload: dict) -> None:
    """Send an event to every receiver now. Receivers must not raise; errors are not ours to handle."""
    console_event.send_robust(sender=__name__, event=event, payload=payload)


def notify_on_commit(event: str, payload: dict) -> None:
    transaction.on_commit(lambda: notify(event, payload))
