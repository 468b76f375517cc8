"""The registry's test seam: a request can be intercepted by API key (as kfake's ControlKey),
and the real handler answers again once the block ends."""
import asyncio

import pytest
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

import engine.protocol.apis  # noqa: F401 - registers the handlers
from engine.protocol import registry
from engine.protocol.dispatch import dispatch


def api_versions_answer() -> ApiVersionsResponse:
    request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
    request.with_header(correlation_id=3, client_id="t")
    frame = request.encode(version=3, header=True, framed=False)
    reply = asyncio.run(dispatch(None, frame, "127.0.0.1"))
    return ApiVersionsResponse.decode(reply[4:], version=3, header=True)


def test_an_intercepted_api_is_answered_by_the_test_and_then_by_the_engine_again():
    seen = []

    async def refuse(ctx, request):
        seen.append(request.client_software_name)
        return ApiVersionsResponse(error_code=0, api_keys=[], throttle_time_ms=1234)

    with registry.intercept(18, refuse) as spec:
        assert spec.name == "ApiVersions"
        assert api_versions_answer().throttle_time_ms == 1234
        with pytest.raises(RuntimeError):
            with registry.intercept(18, refuse):
                pass
    assert seen == ["t"]
    real = api_versions_answer()
    assert real.throttle_time_ms == 0 and len(real.api_keys) > 20


def test_an_interceptor_may_call_the_real_handler():
    async def delayed(ctx, request):
        await asyncio.sleep(0.01)
        return await spec.handler(ctx, request)

    with registry.intercept(18, delayed) as spec:
        assert len(api_versions_answer().api_keys) > 20


def test_every_handler_module_is_found_and_registers_the_key_it_is_named_by():
    modules = engine.protocol.apis.handler_modules()
    assert len(modules) > 40 and "k00_produce" in modules and "k69_consumer_group_describe" in modules
    assert [spec.key for spec in registry.all_apis()] == [int(name[1:3]) for name in modules]


def test_registering_a_key_twice_fails_loudly():
    produce = registry.lookup(0)
    with pytest.raises(RuntimeError, match="API key 0 .* registered twice"):
        registry.api(produce.request_class, produce.response_class, versions=(0, 3))(produce.handler)
    assert registry.lookup(0) is produce
