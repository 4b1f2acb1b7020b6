"""The corked HTTP protocol (app/api/transport/uvicorn_http.py) writes a sized response's head
and body in one write, and anything streamed as uvicorn does."""

from __future__ import annotations

import asyncio
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response, StreamingResponse
from starlette.routing import Route
from uvicorn.config import Config
from uvicorn.server import ServerState

from app.api.transport.uvicorn_http import CorkedCycle, CorkedHttpProtocol


class Recording(asyncio.Transport):
    """A transport that records each write."""

    def __init__(self) -> None:
        super().__init__()
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000)}.get(name, default)

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


async def sized(_request: Request) -> Response:
    return PlainTextResponse("hello body")


async def streamed(_request: Request) -> Response:
    async def parts() -> Any:
        yield b"one"
        yield b"two"

    return StreamingResponse(parts())


APP = Starlette(
    routes=[
        Route("/sized", sized, methods=["GET", "POST", "HEAD"]),
        Route("/streamed", streamed),
    ]
)


async def exchange(request: bytes) -> list[bytes]:
    """The writes answering `request` (one request on a new connection)."""
    config = Config(app=APP, lifespan="off", access_log=False)
    config.load()
    protocol = CorkedHttpProtocol(config=config, server_state=ServerState(), app_state={})
    transport = Recording()
    protocol.connection_made(transport)
    protocol.data_received(request)
    assert isinstance(protocol.cycle, CorkedCycle)
    for _ in range(50):
        await asyncio.sleep(0)
        if protocol.cycle.response_complete:
            break
    assert protocol.cycle.response_complete
    protocol.connection_lost(None)
    return transport.writes


async def test_a_sized_response_is_one_write_of_head_and_body() -> None:
    writes = await exchange(b"POST /sized HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n")
    assert len(writes) == 1
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"content-length: 10\r\n" in writes[0]
    assert writes[0].endswith(b"\r\n\r\nhello body")


async def test_a_head_request_gets_its_head_alone() -> None:
    writes = await exchange(b"HEAD /sized HTTP/1.1\r\nhost: x\r\n\r\n")
    assert len(writes) == 1
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n") and writes[0].endswith(b"\r\n\r\n")


async def test_a_streamed_response_writes_its_head_first_as_uvicorn_does() -> None:
    writes = await exchange(b"GET /streamed HTTP/1.1\r\nhost: x\r\n\r\n")
    assert writes[0].startswith(b"HTTP/1.1 200 OK\r\n")
    assert b"transfer-encoding: chunked" in writes[0] and writes[0].endswith(b"\r\n\r\n")
    assert b"".join(writes[1:]) == b"3\r\none\r\n3\r\ntwo\r\n0\r\n\r\n"


async def test_pipelined_requests_are_answered_in_order_one_write_each() -> None:
    request = b"POST /sized HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n"
    config = Config(app=APP, lifespan="off", access_log=False)
    config.load()
    protocol = CorkedHttpProtocol(config=config, server_state=ServerState(), app_state={})
    transport = Recording()
    protocol.connection_made(transport)
    protocol.data_received(request * 2)
    for _ in range(100):
        await asyncio.sleep(0)
        if len(transport.writes) == 2:
            break
    protocol.connection_lost(None)
    assert len(transport.writes) == 2
    assert all(
        w.startswith(b"HTTP/1.1 200") and w.endswith(b"hello body") for w in transport.writes
    )
