"""Helpers shared by the views: role checks, readable errors, and the JSON API's envelope.

Pages: `@page(VIEWER)` checks the role (`refused`: the 403 page, naming the role needed) and
renders `error.html` (503) when the cluster cannot be asked, or the 403 page "not authorized"
when it refused the console's principal (an ACL), so a page never fails with a 500 for it;
NotFound becomes a 404 and InvalidInput (a wrong value in the address) a 400. Pages that can show part of what they read catch NotAuthorized
themselves and show `not_authorized_note` in its place. JSON: `@json_api(VIEWER)` does the same with JSON bodies,
answers 401 (not a redirect to the login form) to anonymous callers, and accepts HTTP Basic
credentials so scripts can `curl -u user:password`.
"""
from __future__ import annotations

import base64
import binascii
import dataclasses
import functools
from datetime import datetime
from urllib.parse import urlsplit

from django.contrib.auth import authenticate
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import DisallowedHost
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, JsonResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.http import url_has_allowed_host_and_scheme

from console.accounts.roles import has_role
from console.errors import ConsoleError, InvalidInput, NotFound
from console.kafka_gateway.errors import NotAuthorized


def page(minimum_role: str):
    def decorator(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            if not has_role(request.user, minimum_role):
                what = "This page" if request.method in ("GET", "HEAD") else "This change"
                return refused(request, f"{what} needs the {minimum_role} role.", needs_role=minimum_role)
            try:
                return view(request, *args, **kwargs)
            except NotFound as exc:
                raise Http404(str(exc)) from exc
            except NotAuthorized as exc:
                return not_authorized(request, exc)
            except InvalidInput as exc:       # the address asks for what cannot be: not an outage
                return render(request, "error.html", {"message": str(exc), "status": 400,
                                                      "heading": "Cannot show what this address asks for",
                                                      "back": _way_back(request)}, status=400)
            except ConsoleError as exc:
                return render(request, "error.html", {"message": str(exc), "status": 503,
                                                      "back": _way_back(request)}, status=503)
        return wrapper
    return decorator


class ApiEncoder(DjangoJSONEncoder):
    """Dataclasses become objects, tuples lists, frozensets sorted lists."""

    def default(self, o):
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            # Fields marked clusters.records.INTERNAL are for the server only; INLINE ones
            # show their own fields in place of themselves.
            shown = {}
            for f in dataclasses.fields(o):
                if f.metadata.get("inline"):
                    shown.update(self.default(getattr(o, f.name)))
                elif not f.metadata.get("internal"):
                    shown[f.name] = getattr(o, f.name)
            return shown
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
            except NotAuthorized as exc:
                return JsonResponse({"error": str(exc), "kafka_code": exc.kafka_code, "not_authorized": True},
                                    status=403)
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


def form_error(form, exc) -> None:
    """Show a service's ConsoleError on the form (kept filled in), Kafka's code apart."""
    form.add_error(None, str(exc))
    form.kafka_code = getattr(exc, "kafka_code", None)


CONFIRMED = "confirmed"


def unless_confirmed(request, *, message: str, action: str):
    """A confirmation page for a POST that has not been confirmed yet, or None once it has.

    Forms with `data-confirm="message"` ask in the browser first (static/js/confirm.js sets
    the hidden `confirmed` field); a POST without it (no JavaScript, a script, a stale form)
    gets this page, which names what will happen and posts the same fields again, confirmed."""
    if request.POST.get(CONFIRMED) == "yes":
        return None
    fields = [(k, v) for k, v in request.POST.items() if k not in ("csrfmiddlewaretoken", CONFIRMED)]
    return render(request, "confirm.html", {"message": message, "action": action, "fields": fields,
                                            "target": request.path})


@login_not_required
def favicon(request):
    """/favicon.ico, which browsers ask for on their own: the console's icon (static/favicon.svg)."""
    return redirect(static("favicon.svg"), permanent=True)


# --- Error pages: the same layout and navigation as every other page ------------------------
# Each says it once: the status code small above one heading (which names the trouble, not the
# code), one sentence on what went wrong, and a way back (templates/_error_back.html).

def refused(request, sentence: str, *, needs_role: str | None = None):
    """The 403 page for what the console's roles do not allow: `sentence` says what was refused;
    with `needs_role`, the page also names the reader's own role and who can give the one needed."""
    return render(request, "403.html", {"refusal": sentence, "needs_role": needs_role,
                                        "back": _way_back(request)}, status=403)


def not_authorized(request, exc: NotAuthorized):
    """The 403 page for what the cluster would not let the console's principal read (an ACL).
    The exception's sentence already names Kafka's error and its code."""
    return render(request, "403.html", {"refusal": str(exc), "not_authorized": True,
                                        "back": _way_back(request)}, status=403)


def not_found(request, exception=None):
    return render(request, "404.html", {"exception": _detail(exception), "back": _way_back(request)},
                  status=404)


def forbidden(request, exception=None):
    """PermissionDenied raised anywhere: its sentence when it carries one."""
    return refused(request, _detail(exception) or "The console does not let your role do this.")


@login_not_required
def csrf_failure(request, reason=""):
    """CSRF_FAILURE_VIEW: the console's 403 page in place of Django's plain one. `reason` is
    Django's wording for developers ("CSRF token missing."), so the page says what to do instead."""
    return refused(request, "The console did not accept this form: it came without the security token "
                            "the page gave it, or with an expired one (after logging out, or in again in "
                            "another tab). Reload the form's page and send it again.")


def server_error(request):
    """500: the layout with its navigation; if even that fails, Django's plain page does."""
    return render(request, "500.html", status=500)


def _way_back(request) -> str:
    """The page the reader came from, when it is one of the console's own other than this one;
    "" otherwise (templates/_error_back.html then offers the cluster or the clusters)."""
    referer = request.META.get("HTTP_REFERER", "")
    try:
        ours = url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure())
    except DisallowedHost:
        return ""
    return referer if ours and urlsplit(referer).path != request.path else ""


def _detail(exception) -> str:
    # Http404 and PermissionDenied raised by our own code carry a sentence meant for the page;
    # Django's resolver puts a dict in it ("tried": [...]), which is not.
    message = exception.args[0] if exception is not None and exception.args else ""
    return message if isinstance(message, str) else ""
