"""kafka-python's debug log without the console's SASL credentials.

At DEBUG, kafka-python logs each request it sends and the bytes of each send, and a
SaslAuthenticate request carries PLAIN's password or OAUTHBEARER's access token. A filter on
the two loggers that do so puts a placeholder in their place; every other record passes
unchanged. `hide_sasl_credentials()` installs it (once, however often it is called) before the
gateway's clients connect.
"""
from __future__ import annotations

import logging

from kafka.protocol.sasl import SaslAuthenticateRequest, SaslBytesRequest

HIDDEN = "<SASL credentials hidden>"
_LOGGERS = ("kafka.net.connection", "kafka.protocol.parser")
_SASL_AUTHENTICATE_KEY = SaslAuthenticateRequest.API_KEY.to_bytes(2, "big")


class SaslCredentialsFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple) and any(map(_holds_credentials, record.args)):
            record.args = tuple(HIDDEN if _holds_credentials(arg) else arg for arg in record.args)
        return True


def _holds_credentials(arg: object) -> bool:
    if isinstance(arg, (SaslAuthenticateRequest, SaslBytesRequest)):
        return True
    # A send's bytes: a framed request starts with its size (4 bytes), then its API key.
    return isinstance(arg, (bytes, bytearray)) and (arg[4:6] == _SASL_AUTHENTICATE_KEY or b"auth=Bearer " in arg)


_FILTER = SaslCredentialsFilter()


def hide_sasl_credentials() -> None:
    for name in _LOGGERS:
        logging.getLogger(name).addFilter(_FILTER)     # a no-op when it is there already
