"""Kafka's storage design: an append-only log per partition, cut into segments.

No sockets and no asyncio in this package: callers own the threads and the event loop.
"""
