"""The replica fetcher's loop, in-process with a stand-in broker."""
import asyncio
from types import SimpleNamespace

from engine.broker.replica_fetcher import ReplicaFetcher


def test_an_unexpected_error_does_not_end_replication(monkeypatch):
    """One failed round (a bug, a malformed answer) is logged and retried: a fetcher task that
    died would leave every partition of that leader without replication, silently."""
    async def scenario():
        broker = SimpleNamespace(node_id=0)        # the connection is never opened: _fetch stands in
        fetcher = ReplicaFetcher(broker, leader_id=1)
        rounds = []
        second_round = asyncio.Event()

        async def fetch(connection):
            rounds.append(connection)
            if len(rounds) == 1:
                raise ValueError("a response the fetcher did not expect")
            second_round.set()
            await asyncio.Event().wait()    # a long poll, until the fetcher is stopped

        monkeypatch.setattr(fetcher, "_fetch", fetch)
        fetcher.add(SimpleNamespace(topic="t", index=0), truncate=False)
        try:
            await asyncio.wait_for(second_round.wait(), 10)
        finally:
            await fetcher.stop()
        return len(rounds)

    assert asyncio.run(scenario()) >= 2
