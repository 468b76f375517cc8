"""The registry of supported APIs and their version ranges; ApiVersions is answered from it.

Each handler module registers itself with `@api(Request, Response, versions=(lo, hi))`, next to
the handler, as franz-go's kfake does with `regKey`. Registering a key twice is a bug and
raises at import time.

Tests inject faults by API key with `intercept(key, handler)`: while the `with` block runs,
requests of that API go to `handler(ctx, request)` (which may await the real one), as
franz-go's kfake does with ControlKey, instead of monkeypatching handler modules.
"""
from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Awaitable, Callable, Iterator

from kafka.protocol.api_message import ApiMessage


@dataclass(frozen=True)
class ApiSpec:
    key: int
    name: str
    min_version: int
    max_version: int
    request_class: type[ApiMessage]
    response_class: type[ApiMessage]
    handler: Callable[..., Awaitable[object]]

    def supports(self, version: int) -> bool:
        return self.min_version <= version <= self.max_version


_APIS: dict[int, ApiSpec] = {}


def api(request_class: type[ApiMessage], response_class: type[ApiMessage], *, versions: tuple[int, int]):
    """Register the decorated coroutine as the handler for request_class's API key."""
    low, high = versions
    if not 0 <= low <= high <= request_class.max_version:
        raise ValueError(f"{request_class.name}: versions {versions} outside the codec's 0-{request_class.max_version}")

    def register(handler):
        key = request_class.API_KEY
        if key in _APIS:
            raise RuntimeError(f"API key {key} ({request_class.name}) registered twice")
        _APIS[key] = ApiSpec(key, request_class.name.removesuffix("Request"), low, high,
                             request_class, response_class, handler)
        return handler

    return register


def lookup(key: int) -> ApiSpec | None:
    return _APIS.get(key)


def all_apis() -> list[ApiSpec]:
    return [_APIS[key] for key in sorted(_APIS)]


_INTERCEPTS: dict[int, Callable[..., Awaitable[object]]] = {}


def handler_for(spec: ApiSpec) -> Callable[..., Awaitable[object]]:
    return _INTERCEPTS.get(spec.key, spec.handler)


@contextlib.contextmanager
def intercept(key: int, handler: Callable[..., Awaitable[object]]) -> Iterator[ApiSpec]:
    """Answer API `key` with `handler(ctx, request)` inside the block; yields the API's spec,
    whose `handler` is the real one. For tests (fault injection) only."""
    spec = _APIS[key]
    if key in _INTERCEPTS:
        raise RuntimeError(f"API key {key} is already intercepted")
    _INTERCEPTS[key] = handler
    try:
        yield spec
    finally:
        del _INTERCEPTS[key]
