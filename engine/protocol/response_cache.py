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

import time
from typing import Callable, Hashable

from kafka.protocol.api_message import ApiMessage

from engine.cluster.metadata import MetadataImage
from engine.protocol.dispatch import EncodedBody


# recipe(image) -> (key, build): how to answer the same request under another image.
Recipe = Callable[[MetadataImage], tuple[Hashable, Callable[[], ApiMessage]]]
WARM_RECIPES_USED_WITHIN_S = 60.0


class ImageResponseCache:
    def __init__(self, max_entries: int = 16, clock: Callable[[], float] = time.monotonic) -> None:
        self._max_entries = max_entries
        self._image: MetadataImage | None = None
        self._image_version = -1
        self._bodies: dict[Hashable, EncodedBody] = {}
        self._recipes: dict[tuple[int, Hashable], tuple[Recipe, float]] = {}   # -> (recipe, last used)
        self._clock = clock
        self.builds = 0

    def get(self, image: MetadataImage, key: Hashable, api_version: int,
            build: Callable[[], ApiMessage], recipe: tuple[Hashable, Recipe] | None = None) -> EncodedBody:
        """The cached body for `key` under this image, or `build()` encoded at `api_version`.
        `recipe`: (its name, how to build the same answer for a later image), for `warm`."""
        if recipe is not None:
            name, make = recipe
            self._recipes[(api_version, name)] = (make, self._clock())
        return self._get(image, key, api_version, build)

    def warm(self, image: MetadataImage) -> int:
        """Build, for `image`, the answers asked for in the last minute (a console or a pattern
        subscriber polling all topics), so that the first of their next requests does not wait
        for it. Returns how many were built."""
        now, built = self._clock(), 0
        for (api_version, name), (recipe, used) in list(self._recipes.items()):
            if now - used > WARM_RECIPES_USED_WITHIN_S:
                del self._recipes[(api_version, name)]
                continue
            key, build = recipe(image)
            before = self.builds
            self._get(image, key, api_version, build)
            built += self.builds - before
        return built

    def _get(self, image: MetadataImage, key: Hashable, api_version: int,
             build: Callable[[], ApiMessage]) -> EncodedBody:
        if image is not self._image or image.version != self._image_version:
            self._image, self._image_version = image, image.version
            self._bodies.clear()
        cache_key = (api_version, key)
        body = self._bodies.get(cache_key)
        if body is None:
            self.builds += 1
            response = build()
            body = EncodedBody(body=response.encode(version=api_version),
                               flexible=response.flexible_version_q(api_version))
            if len(self._bodies) >= self._max_entries:
                self._bodies.pop(next(iter(self._bodies)))
            self._bodies[cache_key] = body
        return body

