"""Watching a server process drain: its readiness, its listening socket, and how its
WebSockets are closed."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from .server import LiveServer

SERVICE_RESTART = 1012  # the WebSocket close code of a server going away for a restart


async def readiness(server: LiveServer) -> tuple[int, dict[str, Any]]:
    """The status code and JSON body of the server's /readyz."""
    async with httpx.AsyncClient(timeout=5) as client:
        response = await client.get(f"http://127.0.0.1:{server.port}/readyz")
    return response.status_code, dict(response.json())


def accepts_connections(port: int) -> bool:
    """Whether something accepts a TCP connection on the port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


async def refused_after(port: int, timeout: float) -> float:
    """Poll the port until connections are refused; the seconds that took."""
    started = time.monotonic()
    while accepts_connections(port):
        if time.monotonic() - started > timeout:
            raise AssertionError(f"port {port} still accepts connections after {timeout} s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started


@asynccontextmanager
async def subscribed_socket(
    server: LiveServer, token: str | None, protocol: str, query: str, **variables: Any
) -> AsyncIterator[ClientConnection]:
    """A WebSocket speaking `protocol` (graphql-transport-ws, or the legacy graphql-ws),
    initialised with the token, with one subscription started and its first result read."""
    legacy = protocol == "graphql-ws"
    async with connect(server.ws_url, subprotocols=[Subprotocol(protocol)], open_timeout=10) as ws:
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        await ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        assert (await _message(ws))["type"] == "connection_ack"
        start = {"query": query, "variables": variables}
        await ws.send(
            json.dumps({"id": "1", "type": "start" if legacy else "subscribe", "payload": start})
        )
        first = await _message(ws)
        assert first["type"] == ("data" if legacy else "next"), first
        yield ws


async def close_code(ws: ClientConnection, timeout: float = 10.0) -> int | None:
    """Read (and drop) messages until the server closes the socket; its close code."""
    try:
        async with asyncio.timeout(timeout):
            while True:
                await ws.recv()
    except ConnectionClosed as closed:
        return closed.rcvd.code if closed.rcvd is not None else None


async def _message(ws: ClientConnection) -> dict[str, Any]:
    while True:
        message = dict(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        if message["type"] not in ("ka", "ping", "pong"):
            return message
