"""Log capture for tests that prove what is never logged."""
import logging

import pytest

# The console's settings keep the Kafka client libraries at WARNING; a test that proves a secret
# never reaches a log must see what they log at every level.
KAFKA_CLIENT_LOGGERS = ("kafka", "aiokafka")


def capture_debug_logs(caplog: pytest.LogCaptureFixture) -> None:
    """Capture every record, the Kafka client libraries' DEBUG lines included."""
    caplog.set_level(logging.DEBUG)
    for name in KAFKA_CLIENT_LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
