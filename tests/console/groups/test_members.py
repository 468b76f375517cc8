"""A member's client host as the group pages show it: Kafka gives Java's InetAddress.toString()."""
import pytest

from console.groups.members import client_host_shown


@pytest.mark.parametrize("raw, shown", [
    ("/127.0.0.1", "127.0.0.1"),
    ("/0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:1"),
    ("consumer-7.internal/10.0.3.7", "consumer-7.internal (10.0.3.7)"),
    ("10.0.3.7", "10.0.3.7"),
    ("", ""),
])
def test_kafkas_leading_slash_is_not_shown(raw, shown):
    assert client_host_shown(raw) == shown
