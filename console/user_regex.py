"""Regular expressions that people type (message search and tail filters, masking rules) run on
RE2, the linear-time engine Kafka's own regex subscriptions use (KIP-848), never on Python's
backtracking `re`.

With `re`, `^(a+)+$` over 27 `a`s and a `!` takes seconds and holds the GIL meanwhile, so every
other request of the console waits. RE2 answers in time linear in the input, whatever the
pattern. The price is RE2's syntax: no backreferences and no look-around; such a pattern is
refused with RE2's reason.
"""
from __future__ import annotations

import re2

from console.errors import InvalidInput

# RE2 refuses to build a program larger than this (a{1000}{1000} and the like): a pattern's
# memory is bounded as well as its time.
MAX_PROGRAM_BYTES = 8 << 20


def _options():
    options = re2.Options()
    options.log_errors = False          # RE2 writes parse errors to stderr by default; we raise them
    options.max_mem = MAX_PROGRAM_BYTES
    return options


def compile_user_regex(pattern: str, *, as_bytes: bool = False):
    """The compiled pattern (searching bytes if `as_bytes`), or InvalidInput with RE2's reason."""
    try:
        return re2.compile(pattern.encode("utf-8") if as_bytes else pattern, options=_options())
    except re2.error as exc:
        reason = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InvalidInput(f"Bad regular expression {pattern!r}: {reason} (the console uses RE2 syntax: "
                           "no backreferences or look-around).") from None
