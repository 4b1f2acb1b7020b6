"""Raw HTTP and WebSocket access for the abuse-resistance tests: the full JSON answer
(errors, extensions, status codes, close codes), from a chosen loopback source address."""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

from tests.support.client import SIGN_UP
from tests.support.server import LiveServer

PASSWORD = "password123"
_names = itertools.count(1)
_run = random.Random().randrange(36**4)


def unique_name(prefix: str = "u") -> str:
    """A username nobody else in this run (nor, very likely, an earlier one) has."""
    return f"{prefix}{_run:x}{next(_names)}"[:20]


def random_loopback() -> str:
    """A source address in 127.0.0.0/8 other than 127.0.0.1: rate limits per IP count it
    alone, so tests (and other runs sharing a Redis) do not use up each other's budget."""
    return f"127.{random.randrange(1, 255)}.{random.randrange(0, 255)}.{random.randrange(2, 255)}"


def code_of(answer: dict[str, Any]) -> str | None:
    """The `extensions.code` of an answer's first error; None when it has no error."""
    errors = answer.get("errors") or []
    if not errors:
        return None
    code = (errors[0].get("extensions") or {}).get("code")
    return str(code) if code is not None else None


class GraphQLFailure(AssertionError):
    """An answer with errors where data was expected."""


class Gql:
    """One caller over HTTP: a token (or none) and a source address."""

    def __init__(
        self,
        server: LiveServer,
        http: httpx.AsyncClient,
        token: str | None = None,
        player_id: str | None = None,
        username: str | None = None,
    ) -> None:
        self.server = server
        self.http = http
        self.token = token
        self.player_id = player_id
        self.username = username

    def headers(self) -> dict[str, str]:
        """The Authorization header of this caller, if signed in."""
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def post(self, query: str, **variables: Any) -> dict[str, Any]:
        """The whole JSON answer of one operation (status must be 200)."""
        response = await self.http.post(
            self.server.http_url,
            json={"query": query, "variables": variables},
            headers=self.headers(),
        )
        assert response.status_code == 200, (response.status_code, response.text[:500])
        return dict(response.json())

    async def data(self, query: str, **variables: Any) -> dict[str, Any]:
        """The data of an operation that must succeed."""
        answer = await self.post(query, **variables)
        if answer.get("errors"):
            raise GraphQLFailure(answer["errors"])
        return dict(answer["data"])

    async def sign_up(self, username: str | None = None, password: str = PASSWORD) -> Gql:
        """Create an account and use its token from now on."""
        username = username or unique_name()
        data = await self.data(
            SIGN_UP,
            u=username,
            p=password,
        )
        self.token = data["signUp"]["token"]
        self.player_id = data["signUp"]["player"]["id"]
        self.username = username
        return self

    def as_(self, token: str | None) -> Gql:
        """The same connection with another token."""
        return Gql(self.server, self.http, token)


@asynccontextmanager
async def http_client(source: str | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client whose requests come from `source` (a loopback address)."""
    transport = httpx.AsyncHTTPTransport(local_address=source) if source else None
    async with httpx.AsyncClient(transport=transport, timeout=30) as client:
        yield client


@asynccontextmanager
async def ws_connection(
    server: LiveServer, token: str | None, *, max_size: int | None = 2**22
) -> AsyncIterator[ClientConnection]:
    """A graphql-transport-ws connection, initialised with the token in the init payload.
    The caller checks the answer to connection_init (ack, or a close)."""
    async with connect(
        server.ws_url,
        subprotocols=["graphql-transport-ws"],  # type: ignore[list-item]
        max_size=max_size,
        open_timeout=10,
        close_timeout=2,
    ) as socket:
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        await socket.send(json.dumps({"type": "connection_init", "payload": payload}))
        yield socket


async def receive(socket: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    """The next protocol message (pings are answered and skipped)."""
    import asyncio

    while True:
        raw = await asyncio.wait_for(socket.recv(), timeout)
        message = dict(json.loads(raw))
        if message.get("type") == "ping":
            await socket.send(json.dumps({"type": "pong"}))
            continue
        return message


async def subscribe(
    socket: ClientConnection, operation_id: str, query: str, **variables: Any
) -> None:
    """Start a subscription on an acknowledged connection."""
    await socket.send(
        json.dumps(
            {
                "id": operation_id,
                "type": "subscribe",
                "payload": {"query": query, "variables": variables},
            }
        )
    )
