"""A mutation under way over a WebSocket is never cancelled: a connection that ends (its
client went away, or a draining server closed it with 1012) lets it finish, so what it
changes is made, whether or not its answer can still be sent."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import httpx
import pytest
from websockets.asyncio.client import connect

from app.api.transport.websocket import is_mutation
from tests.security.helpers import unique_name
from tests.support.client import SIGN_UP
from tests.support.server import LiveServer

PASSWORD = "password123"
SIGN_IN = "mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { token } }"


@pytest.fixture(scope="module")
def slow_hashing_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server whose password hashing takes a while (a sign-up is a mutation still under
    way when the client hangs up right after sending it)."""
    live = LiveServer(
        tmp_path_factory.mktemp("finish") / "spades.db",
        env={"SPADES_ARGON2_TIME_COST": "6", "SPADES_ARGON2_MEMORY_KIB": "65536"},
    )
    live.start()
    yield live
    live.stop()


def start_message(subprotocol: str, query: str, variables: dict[str, str]) -> str:
    kind = "subscribe" if subprotocol == "graphql-transport-ws" else "start"
    return json.dumps(
        {"id": "1", "type": kind, "payload": {"query": query, "variables": variables}}
    )


async def signed_in(server: LiveServer, username: str, within: float) -> bool:
    deadline = asyncio.get_running_loop().time() + within
    async with httpx.AsyncClient(timeout=10) as client:
        while True:
            answer = await client.post(
                server.http_url,
                json={"query": SIGN_IN, "variables": {"u": username, "p": PASSWORD}},
            )
            if (answer.json().get("data") or {}).get("signIn"):
                return True
            if asyncio.get_running_loop().time() > deadline:
                return False
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("subprotocol", ["graphql-transport-ws", "graphql-ws"])
async def test_a_mutation_sent_just_before_the_socket_closes_is_still_made(
    slow_hashing_server: LiveServer, subprotocol: str
) -> None:
    username = unique_name("gone")
    async with connect(
        slow_hashing_server.ws_url,
        subprotocols=[subprotocol],
        open_timeout=10,  # type: ignore[list-item]
    ) as socket:
        await socket.send(json.dumps({"type": "connection_init", "payload": {}}))
        ack = json.loads(await asyncio.wait_for(socket.recv(), 10))
        assert ack["type"] == "connection_ack"
        await socket.send(start_message(subprotocol, SIGN_UP, {"u": username, "p": PASSWORD}))
        # Hang up at once: the sign-up is still hashing its password.
    assert await signed_in(slow_hashing_server, username, within=10)


def test_only_a_mutation_is_let_run_to_its_end() -> None:
    assert is_mutation("mutation { signOut }", None)
    assert is_mutation("query Q { me { id } } mutation M { signOut }", "M")
    assert not is_mutation("query Q { me { id } } mutation M { signOut }", "Q")
    assert not is_mutation("subscription { lobbyUpdates { event } }", None)
    assert not is_mutation("{ me { id } }", None)
    assert not is_mutation("mutation {", None)
    assert not is_mutation(None, None)
