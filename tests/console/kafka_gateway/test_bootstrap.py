"""The bootstrap list: servers that refuse are left out, so a down broker costs no bootstrap."""
import socket
import time
from contextlib import contextmanager

from console.kafka_gateway import ConnectionSettings, open_gateway
from console.kafka_gateway.bootstrap import answering_servers, server_list
from tests.support.engine_process import refused_port


def test_refusing_servers_are_left_out_in_the_listed_order(engine_cluster):
    live = server_list(engine_cluster.bootstrap)
    with refused_port() as dead_a, refused_port() as dead_b:
        listed = [f"127.0.0.1:{dead_a}", live[1], f"127.0.0.1:{dead_b}", live[0], "no-such-host.invalid:9092"]
        assert answering_servers(listed) == [live[1], live[0]]
        dead = [f"127.0.0.1:{dead_a}", f"127.0.0.1:{dead_b}"]
        assert answering_servers(dead) == dead          # none answers: the client gives the error
    assert answering_servers(live[:1]) == live[:1]


def test_a_gateway_bootstraps_past_many_refusing_servers(engine_cluster):
    """Nine refusing servers and one broker: kafka-python alone picks a refusing one 9 times
    in 10 and backs off each time, so a 2 s bootstrap would mostly fail."""
    live = server_list(engine_cluster.bootstrap)[0]
    with refused_port() as dead:
        servers = ",".join([f"127.0.0.1:{dead}"] * 9 + [live])
        for _ in range(3):
            with open_gateway(ConnectionSettings(bootstrap_servers=servers), bootstrap_timeout_ms=2000) as gw:
                assert [b.node_id for b in gw.metadata().brokers] == [0, 1, 2]


@contextmanager
def silent_port():
    """A port whose SYNs go unanswered, as a powered-off host's: it listens, never accepts, and
    its accept queue is full."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    try:
        yield port
    finally:
        for sock in (*fillers, listener):
            sock.close()


def test_a_silent_server_costs_a_grace_not_the_timeout(engine_cluster):
    live = server_list(engine_cluster.bootstrap)[0]
    with silent_port() as silent:
        started = time.monotonic()
        assert answering_servers([f"127.0.0.1:{silent}", live], timeout_s=60) == [live]
        assert time.monotonic() - started < 30          # it did not wait the timeout out
        assert answering_servers([f"127.0.0.1:{silent}"] * 2, timeout_s=0.5) == [f"127.0.0.1:{silent}"] * 2
