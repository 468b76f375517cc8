"""BrokerConnection, the followers' outbound connection: cancellation must always win."""
import asyncio

from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from engine.broker.connection import BrokerConnection


def test_a_cancel_that_arrives_with_the_response_is_not_swallowed():
    """A replica fetcher is stopped by cancelling its task; if the response lands in the same
    loop iteration, the request must still end cancelled (asyncio.wait_for on Python 3.11
    returned the response instead, and a stopping broker waited for its fetcher forever)."""
    async def scenario():
        requests = asyncio.Queue()

        async def serve(reader, writer):
            await requests.put(await reader.readexactly(4))

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        connection = BrokerConnection(lambda: asyncio.open_connection("127.0.0.1", port), "test")
        task = asyncio.create_task(connection.request(ApiVersionsRequest(), 0, ApiVersionsResponse))
        await requests.get()
        while connection._reader is None or not connection._reader._waiter:
            await asyncio.sleep(0)          # the request waits for its response now
        response = ApiVersionsResponse(error_code=0, api_keys=[])
        response.API_VERSION = 0
        response.with_header(correlation_id=1)
        connection._reader.feed_data(response.encode(header=True, framed=True))
        task.cancel()                       # the same iteration in which the response arrived
        outcome = (await asyncio.gather(task, return_exceptions=True))[0]
        server.close()
        return outcome

    assert isinstance(asyncio.run(scenario()), asyncio.CancelledError)
