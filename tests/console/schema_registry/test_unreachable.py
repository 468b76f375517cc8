"""A registry that does not answer is asked once, then again only after UNREACHABLE_SECONDS:
a page of binary values each "framed" with another id must not wait on it once per record."""
from __future__ import annotations

import socket

import pytest
import requests

from console.schema_registry import resolver
from console.schema_registry.client import RegistryClient, RegistryUnreachable


@pytest.fixture
def dead_client():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    resolver.UNREACHABLE.clear()
    yield RegistryClient(f"http://127.0.0.1:{port}", timeout=2)
    resolver.UNREACHABLE.clear()


def test_a_registry_that_does_not_answer_is_asked_again_only_after_a_pause(dead_client, monkeypatch):
    calls = []
    real = requests.request
    monkeypatch.setattr(requests, "request", lambda method, url, **kw: calls.append(url) or real(method, url, **kw))
    with pytest.raises(RegistryUnreachable, match="does not answer"):
        resolver.resolve_id(dead_client, 7)
    for schema_id in (8, 9, 7):
        with pytest.raises(RegistryUnreachable, match="does not answer"):
            resolver.resolve_id(dead_client, schema_id)
    assert len(calls) == 1
    monkeypatch.setattr(resolver, "UNREACHABLE_SECONDS", 0.0)
    with pytest.raises(RegistryUnreachable):
        resolver.resolve_id(dead_client, 8)
    assert len(calls) == 2
