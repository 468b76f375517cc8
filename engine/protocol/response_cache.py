"""Response bodies encoded once and reused while the cluster metadata stays the same.

A Metadata request for all topics at 20,000 partitions costs the event loop about 0.2 s to
build and encode with kafka.protocol, and every broker shares that loop. Consoles and
pattern-subscribed consumers ask for it again and again while nothing changes, so the body
is kept per (API version, live brokers) and thrown away as soon as the image changes (its
`version` moves, or the controller swaps in another image object).

The answers cached depend only on the image, the live brokers and the version asked, not on
the broker asked, so the brokers of one engine share one cache (engine/runtime.py).
Not thread-safe: used only from the event loop the brokers share.
"""
from __future__ import annotations

from typing import Callable, Hashable

from kafka.protocol.api_message import ApiMessage

from engine.cluster.metadata import MetadataImage
from engine.protocol.dispatch import EncodedBody


class ImageResponseCache:
    def __init__(self, max_entries: int = 16) -> None:
        self._max_entries = max_entries
        self._image: MetadataImage | None = None
        self._image_version = -1
        self._bodies: dict[Hashable, EncodedBody] = {}

    def get(self, image: MetadataImage, key: Hashable, api_version: int,
            build: Callable[[], ApiMessage]) -> EncodedBody:
        """The cached body for `key` under this image, or `build()` encoded at `api_version`."""
        if image is not self._image or image.version != self._image_version:
            self._image, self._image_version = image, image.version
            self._bodies.clear()
        cache_key = (api_version, key)
        body = self._bodies.get(cache_key)
        if body is None:
            response = build()
            body = EncodedBody(body=response.encode(version=api_version),
                               flexible=response.flexible_version_q(api_version))
            if len(self._bodies) >= self._max_entries:
                self._bodies.pop(next(iter(self._bodies)))
            self._bodies[cache_key] = body
        return body
