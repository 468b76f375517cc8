"""Counters of what the protocol layer refused, process-wide, and a log that a flood of bad
requests cannot flood: each refusal is logged as one line, up to a rate, then summed up."""
from __future__ import annotations

import collections
import logging
import time

# connections_refused, connections_idle_closed, connections_closed_for_room, invalid_requests, malformed_requests
STATS: collections.Counter = collections.Counter()

_WINDOW_S = 10.0
_LINES_PER_WINDOW = 20
_windows: dict[str, list] = {}        # kind -> [window start, lines logged, lines suppressed]


def refused(logger: logging.Logger, kind: str, message: str, *args) -> None:
    """Count one refusal of `kind`, and log it unless this kind already logged its share of
    lines in the current window (the next line logged says how many were left out)."""
    STATS[kind] += 1
    now = time.monotonic()
    window = _windows.setdefault(kind, [now, 0, 0])
    if now - window[0] >= _WINDOW_S:
        if window[2]:
            logger.warning("... and %d more %s not logged", window[2], kind.replace("_", " "))
        window[:] = [now, 0, 0]
    if window[1] >= _LINES_PER_WINDOW:
        window[2] += 1
        return
    window[1] += 1
    logger.warning(message + " (%d %s so far)", *args, STATS[kind], kind.replace("_", " "))
