"""Helpers shared by the views: role checks, readable errors, and the JSON API's envelope.

Pages: `@page(VIEWER)` checks the role and renders `error.html` (503) when the cluster cannot
be asked; NotFound becomes a 404. JSON: `@json_api(VIEWER)` does the same with JSON bodies,
answers 401 (not a redirect to the login form) to anonymous callers, and accepts HTTP Basic
credentials so scripts can `curl -u user:password`.
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
from datetime import datetime

from django.contrib.auth import authenticate
from django.contrib.auth.decorators import login_not_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render

from console.accounts.roles import has_role
from console.errors import ConsoleError, InvalidInput, NotFound


def page(minimum_role: str):
    def decorator(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            if not has_role(request.user, minimum_role):
                return render(request, "error.html", {"message": f"This page needs the {minimum_role} role."},
                              status=403)
            try:
                return view(request, *args, **kwargs)
            except NotFound as exc:
                raise Http404(str(exc)) from exc
            except ConsoleError as exc:
                return render(request, "error.html", {"message": str(exc)}, status=503)
        return wrapper
    return decorator


class ApiEncoder(DjangoJSONEncoder):
    """Dataclasses become objects, tuples lists, frozensets sorted lists."""

    def default(self, o):
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            # Fields marked clusters.records.INTERNAL are for the server only.
            return {f.name: getattr(o, f.name) for f in dataclasses.fields(o) if not f.metadata.get("internal")}
        if isinstance(o, (set, frozenset)):
            return sorted(o)
        if isinstance(o, datetime):
            return o.isoformat()
        return super().default(o)


def json_api(minimum_role: str):
    def decorator(view):
        @login_not_required
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            if not request.user.is_authenticated:
                user = _basic_auth_user(request)
                if user is None:
                    return JsonResponse({"error": "Authentication required."}, status=401,
                                        headers={"WWW-Authenticate": 'Basic realm="console"'})
                request.user = user
            if not has_role(request.user, minimum_role):
                return JsonResponse({"error": f"This needs the {minimum_role} role."}, status=403)
            try:
                data = view(request, *args, **kwargs)
            except NotFound as exc:
                return JsonResponse({"error": str(exc)}, status=404)
            except InvalidInput as exc:
                return JsonResponse({"error": str(exc)}, status=400)
            except ConsoleError as exc:
                return JsonResponse({"error": str(exc)}, status=503)
            if isinstance(data, HttpResponseBase):   # a decorator's answer (405) or a streamed one (JSON Lines)
                return data
            return JsonResponse(data, encoder=ApiEncoder, safe=False)
        return wrapper
    return decorator


def _basic_auth_user(request):
    header = request.headers.get("Authorization", "")
    if not header.startswith("Basic "):
        return None
    try:
        username, _, password = base64.b64decode(header[6:]).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return authenticate(request, username=username, password=password)
