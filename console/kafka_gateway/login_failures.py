"""Why a bootstrap failed, when the cluster refused our SASL login.

kafka-python's bootstrap logs each failed attempt and, whatever the reason, ends with
"Unable to bootstrap" once its timeout runs out: a wrong password would read as a cluster
that did not answer. While one admin client bootstraps, `LoginFailures` keeps the SASL
refusals logged by that client's own I/O thread (other gateways bootstrap at the same time
on other threads), so the page can say that the login was refused. The broker's message is
kept ("Authentication failed ... invalid credentials with SASL mechanism X"): it never holds
the password.
"""
from __future__ import annotations

import logging

import kafka.errors as Errors

_LOGIN_ERRORS = (Errors.SaslAuthenticationFailedError, Errors.UnsupportedSaslMechanismError,
                 Errors.IllegalSaslStateError)
_MANAGER_LOG = logging.getLogger("kafka.net.manager")


class LoginFailures(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self._seen: list[tuple[int | None, BaseException]] = []

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        self._seen += [(record.thread, arg) for arg in args if isinstance(arg, _LOGIN_ERRORS)]
        return True

    def __enter__(self) -> "LoginFailures":
        _MANAGER_LOG.addFilter(self)
        return self

    def __exit__(self, *exc_info) -> None:
        _MANAGER_LOG.removeFilter(self)

    def last_for(self, thread_ident: int | None) -> BaseException | None:
        mine = [exc for thread, exc in self._seen if thread == thread_ident]
        return mine[-1] if mine else None


def refusal_text(exc: BaseException) -> str:
    if isinstance(exc, Errors.UnsupportedSaslMechanismError):
        return "the cluster does not enable this SASL mechanism"
    detail = str(exc).split(": ", 1)[-1]
    return f"the cluster refused the SASL login ({detail[:300]})"
