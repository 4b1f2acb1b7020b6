"""Tokens and sign-in: expiry, signOut revocation (HTTP and open WebSockets, in this and
another process), digests at rest, no username enumeration, no password in the log, and
the per-player caps on WebSocket connections and subscriptions."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, cast

import pytest
from starlette.websockets import WebSocket
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed

from app.api.app import create_app
from app.api.socket_guards import Connection, Guards
from app.broker.memory import MemoryBroker
from app.services.accounts.auth import Player, hash_token
from app.services.container import Services
from app.settings import Settings
from tests.support.server import LiveServer, running

from .helpers import (
    Gql,
    code_of,
    http_client,
    random_loopback,
    receive,
    subscribe,
    unique_name,
    ws_connection,
)

ME = "{ me { id username } }"
SIGN_IN = "mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) { token } }"
SIGN_UP = "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }"
SIGN_OUT = "mutation { signOut }"
LOBBY_UPDATES = "subscription { lobbyUpdates { event tableId } }"
GAME_UPDATES = "subscription($t: ID!) { gameUpdates(tableId: $t) { event view { version } } }"
CONNECTIONS_PER_PLAYER = 2
SUBSCRIPTIONS_PER_PLAYER = 3


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A server logging everything (debug), with small per-player caps."""
    env = {
        "SPADES_LOG_LEVEL": "debug",
        "SPADES_WS_CONNECTIONS_PER_PLAYER": str(CONNECTIONS_PER_PLAYER),
        "SPADES_SUBSCRIPTIONS_PER_PLAYER": str(SUBSCRIPTIONS_PER_PLAYER),
    }
    with running(tmp_path_factory.mktemp("tokens") / "spades.db", env) as server:
        yield server


async def acknowledged(socket: ClientConnection) -> None:
    """Wait for connection_ack."""
    assert (await receive(socket))["type"] == "connection_ack"


async def closed_with(socket: ClientConnection, timeout: float = 10.0) -> int | None:
    """Read until the server closes the socket; its close code."""
    with pytest.raises(ConnectionClosed):
        while True:
            await receive(socket, timeout)
    return socket.close_code


async def still_open(socket: ClientConnection) -> bool:
    """The connection answers a protocol ping."""
    await socket.send(json.dumps({"type": "ping"}))
    return bool((await receive_raw(socket))["type"] == "pong")


async def receive_raw(socket: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    """The next message, pongs included."""
    return dict(json.loads(await asyncio.wait_for(socket.recv(), timeout)))


# ---------------------------------------------------------------------------- signOut


async def test_sign_out_revokes_the_token_at_once_and_only_that_token(live: LiveServer) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
        assert (await api.data(ME))["me"]["id"] == api.player_id  # now in the token cache
        second = (await api.data(SIGN_IN, u=api.username, p="password123"))["signIn"]["token"]
        assert await api.data(SIGN_OUT) == {"signOut": True}
        assert code_of(await api.post(ME)) == "UNAUTHENTICATED"
        assert code_of(await api.post(SIGN_OUT)) == "UNAUTHENTICATED"
        assert code_of(await api.post("mutation { createTable(input: {}) { id } }")) == (
            "UNAUTHENTICATED"
        )
        assert (await api.as_(second).data(ME))["me"]["id"] == api.player_id


async def test_sign_out_closes_the_open_websockets_of_that_token(live: LiveServer) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
        other = (await api.data(SIGN_IN, u=api.username, p="password123"))["signIn"]["token"]
        async with ws_connection(live, api.token) as doomed, ws_connection(live, other) as kept:
            await acknowledged(doomed)
            await acknowledged(kept)
            await subscribe(doomed, "lobby", LOBBY_UPDATES)
            await subscribe(kept, "lobby", LOBBY_UPDATES)
            await asyncio.sleep(0.3)
            assert await api.data(SIGN_OUT) == {"signOut": True}
            assert await closed_with(doomed) == 4401
            assert await still_open(kept)


async def test_a_revoked_token_cannot_open_a_websocket(live: LiveServer) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
        await api.data(SIGN_OUT)
    async with ws_connection(live, api.token) as socket:
        assert await closed_with(socket) == 4401


async def test_sign_out_through_another_process_closes_the_websocket_here(
    redis_pair: tuple[LiveServer, LiveServer],
) -> None:
    first, second = redis_pair
    async with http_client(random_loopback()) as http:
        api = await Gql(first, http).sign_up()
        assert (await api.data(ME))["me"]["id"] == api.player_id  # cached by the first
        async with ws_connection(first, api.token) as socket:
            await acknowledged(socket)
            await subscribe(socket, "lobby", LOBBY_UPDATES)
            await asyncio.sleep(0.3)
            assert await Gql(second, http, api.token).data(SIGN_OUT) == {"signOut": True}
            assert await closed_with(socket) == 4401
        assert code_of(await api.post(ME)) == "UNAUTHENTICATED"


class ReconnectingBroker(MemoryBroker[Any]):
    """The in-process broker, able to act out what the Redis broker does after its
    connection dropped and came back: every subscriber is told to resynchronise."""

    def reconnect(self) -> None:
        for subscribers in self._channels.values():
            for subscription in subscribers:
                subscription.resync()


class FakeSocket:
    """Stands for a WebSocket in the guards' registry; records how it was closed."""

    def __init__(self) -> None:
        self.closed: tuple[int, str] | None = None

    async def close(self, code: int, reason: str) -> None:
        self.closed = (code, reason)


def register(guards: Guards, socket: FakeSocket, token: str, player: Player) -> None:
    """Register a signed-in socket, as on_ws_connect does."""
    expires = time.time() + 60
    connection = Connection(cast(WebSocket, socket), player.id, hash_token(token), expires)
    assert guards.open(connection)


@asynccontextmanager
async def in_process(
    tmp_path: Path,
) -> AsyncIterator[tuple[Services, ReconnectingBroker, Guards]]:
    """Services and the app's guards in this process, on a broker that can reconnect."""
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'spades.db'}",
        argon2_time_cost=1,
        argon2_memory_kib=1024,
    )
    broker = ReconnectingBroker()
    services = Services(settings, broker=broker)
    app = create_app(settings, services)
    await services.start()
    try:
        yield services, broker, cast(Guards, app.state.guards)
    finally:
        await services.stop()


async def settle() -> None:
    for _ in range(20):
        await asyncio.sleep(0.01)


async def test_revocations_are_still_heard_after_the_broker_reconnects(tmp_path: Path) -> None:
    async with in_process(tmp_path) as (services, broker, guards):
        token, player = await services.auth.sign_up("alice", "password123")
        socket = FakeSocket()
        register(guards, socket, token, player)
        broker.reconnect()
        await settle()
        assert socket.closed is None  # nothing was revoked
        assert await services.sign_out(token)
        await settle()
        assert socket.closed == (4401, "token revoked")


async def test_a_revocation_missed_while_the_broker_was_away_closes_its_sockets(
    tmp_path: Path,
) -> None:
    async with in_process(tmp_path) as (services, broker, guards):
        kept_token, kept_player = await services.auth.sign_up("alice", "password123")
        lost_token, lost_player = await services.auth.sign_up("bobby", "password123")
        kept, lost = FakeSocket(), FakeSocket()
        register(guards, kept, kept_token, kept_player)
        register(guards, lost, lost_token, lost_player)
        # Revoked in the database by another process whose broadcast never arrived; this
        # process still holds the token in its authentication cache.
        assert await services.auth.sign_out(lost_token)
        services.auth._cache[hash_token(lost_token)] = (lost_player, time.time() + 60)
        assert await services.auth.authenticate(lost_token) is not None
        broker.reconnect()
        await settle()
        assert lost.closed == (4401, "token revoked")
        assert kept.closed is None
        assert await services.auth.authenticate(lost_token) is None
        assert await services.auth.authenticate(kept_token) is not None


async def test_a_player_who_moves_rarely_is_not_read_again_until_the_recheck(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process(tmp_path) as (services, _broker, _guards):
        token, player = await services.auth.sign_up("alice", "password123")
        reads = 0
        read = services.auth.db.read

        def counted() -> Any:
            nonlocal reads
            reads += 1
            return read()

        monkeypatch.setattr(services.auth.db, "read", counted)
        assert await services.auth.authenticate(token) == player
        assert reads == 1
        # Five minutes later (a slow player, or one waiting for a long game): still cached.
        later = time.time() + 300
        monkeypatch.setattr("app.services.accounts.auth.time.time", lambda: later)
        assert await services.auth.authenticate(token) == player
        assert reads == 1
        # Signing out still ends it at once.
        assert await services.sign_out(token)
        assert await services.auth.authenticate(token) is None


async def test_a_cached_token_is_never_honoured_past_its_own_expiry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with in_process(tmp_path) as (services, _broker, _guards):
        token, player = await services.auth.sign_up("alice", "password123")
        assert await services.auth.authenticate(token) == player
        expiry = await services.auth.expiry(token)
        assert expiry is not None
        monkeypatch.setattr("app.services.accounts.auth.time.time", lambda: expiry + 1)
        assert await services.auth.authenticate(token) is None


# ---------------------------------------------------------------------------- expiry


async def test_tokens_expire_after_the_configured_number_of_days(tmp_path: Path) -> None:
    with running(tmp_path / "spades.db", {"SPADES_TOKEN_TTL_DAYS": "0"}) as live:
        async with http_client() as http:
            api = await Gql(live, http).sign_up()
            assert code_of(await api.post(ME)) == "UNAUTHENTICATED"
            token = (await api.data(SIGN_IN, u=api.username, p="password123"))["signIn"]["token"]
            assert code_of(await api.as_(token).post(ME)) == "UNAUTHENTICATED"
        async with ws_connection(live, token) as socket:
            assert await closed_with(socket) == 4401


async def test_tokens_last_thirty_days_by_default(live: LiveServer) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
    row = stored_token(live, str(api.token))
    assert row is not None
    created, expires = row
    assert expires - created == pytest.approx(30 * 86_400, abs=60)


# ---------------------------------------------------------------------------- at rest


def stored_token(live: LiveServer, token: str) -> tuple[float, float] | None:
    """(created_at, expires_at) of the row stored for `token` (looked up by digest)."""
    digest = hashlib.sha256(token.encode()).hexdigest()
    with sqlite3.connect(f"file:{live.database}?mode=ro", uri=True) as db:
        row = db.execute(
            "SELECT created_at, expires_at FROM tokens WHERE token_hash = ?", (digest,)
        ).fetchone()
    return (float(row[0]), float(row[1])) if row is not None else None


async def test_tokens_are_stored_and_compared_only_as_sha256_digests(live: LiveServer) -> None:
    """The lookup is by digest: nothing compares the secret itself, byte by byte, and a
    leaked database holds no usable token."""
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
    token = str(api.token)
    assert stored_token(live, token) is not None
    with sqlite3.connect(f"file:{live.database}?mode=ro", uri=True) as db:
        dump = "\n".join(db.iterdump())
    assert token not in dump


# ---------------------------------------------------------------------------- sign-in


async def test_sign_in_answers_alike_for_an_unknown_user_and_a_wrong_password(
    live: LiveServer,
) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
        answers = [
            await api.post(SIGN_IN, u=unique_name(), p="password123"),
            await api.post(SIGN_IN, u=api.username, p="wrong-password"),
            await api.post(SIGN_IN, u=str(api.username).upper(), p="wrong-password"),
            await api.post(SIGN_IN, u="x" * 300, p="password123"),
            await api.post(SIGN_IN, u=api.username, p="p" * 300),
        ]
    errors = [a["errors"][0] for a in answers]
    assert all(a.get("data") is None for a in answers)
    assert {e["message"] for e in errors} == {"invalid username or password"}
    assert {e["extensions"]["code"] for e in errors} == {"UNAUTHENTICATED"}


async def test_passwords_and_tokens_never_reach_the_server_log(live: LiveServer) -> None:
    secrets = {name: f"Pw{name}{unique_name()}" for name in ("up", "in", "wrong", "ws", "get")}
    secrets["long"] = "Long" + "x" * 300
    async with http_client() as http:
        api = await Gql(live, http).sign_up(password=secrets["up"])
        await api.data(SIGN_IN, u=api.username, p=secrets["up"])
        assert code_of(await api.post(SIGN_IN, u=api.username, p=secrets["wrong"])) == (
            "UNAUTHENTICATED"
        )
        assert code_of(await api.post(SIGN_IN, u=unique_name(), p=secrets["in"])) == (
            "UNAUTHENTICATED"
        )
        assert code_of(await api.post(SIGN_UP, u=unique_name(), p=secrets["long"])) == (
            "BAD_USER_INPUT"
        )
        inline = f'mutation {{ signIn(username: "{api.username}", password: "{secrets["get"]}")'
        refused = await http.get(live.http_url, params={"query": inline + " { token } }"})
        assert refused.status_code == 405  # no mutations over GET; the URL is still logged
        async with ws_connection(live, api.token) as socket:
            await acknowledged(socket)
            await subscribe(socket, "in", SIGN_IN, u=api.username, p=secrets["ws"])
            assert (await receive(socket))["type"] == "next"
    await asyncio.sleep(0.5)
    log = live.logs()
    assert "POST /graphql" in log  # the log is there, and verbose
    for name, secret in secrets.items():
        assert secret[:40] not in log, f"the {name} password is in the log"
    token = str(api.token)
    assert token[:12] not in log and token[-12:] not in log, "a token is in the log"


# ---------------------------------------------------------------------------- caps


async def test_websocket_connections_per_player_are_capped(live: LiveServer) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
        other = await Gql(live, http).sign_up()
    async with (
        ws_connection(live, api.token) as first,
        ws_connection(live, api.token) as second,
    ):
        await acknowledged(first)
        await acknowledged(second)
        async with ws_connection(live, api.token) as third:
            assert await closed_with(third) == 4429
        async with ws_connection(live, other.token) as someone_else:
            await acknowledged(someone_else)
        await first.close()
        for _attempt in range(50):  # the server notices the close
            async with ws_connection(live, api.token) as again:
                if (await receive_raw(again))["type"] == "connection_ack":
                    break
            await asyncio.sleep(0.1)
        else:
            pytest.fail("a closed connection never freed its slot")
        assert await still_open(second)


async def test_subscriptions_per_player_are_capped(live: LiveServer) -> None:
    async with http_client() as http:
        api = await Gql(live, http).sign_up()
        table = (await api.data("mutation { createTable(input: {}) { id } }"))["createTable"]["id"]

    async def snapshot(socket: ClientConnection, operation: str) -> None:
        await subscribe(socket, operation, GAME_UPDATES, t=table)
        message = await receive(socket)
        assert message["id"] == operation and message["type"] == "next", message
        assert message["payload"]["data"]["gameUpdates"]["event"] == "SNAPSHOT"

    async with ws_connection(live, api.token) as first, ws_connection(live, api.token) as second:
        await acknowledged(first)
        await acknowledged(second)
        await snapshot(first, "a")
        await snapshot(first, "b")
        await snapshot(second, "c")  # the cap is per player, over all connections
        await subscribe(second, "d", GAME_UPDATES, t=table)
        # One too many: the socket is closed with 4429, the reason naming the limit.
        assert await closed_with(second) == 4429
        assert second.close_reason is not None
        assert f"at most {SUBSCRIPTIONS_PER_PLAYER}" in second.close_reason
        assert await still_open(first)
        await first.send(json.dumps({"id": "a", "type": "complete"}))
        for attempt in range(50):  # the server ends the completed subscription
            async with ws_connection(live, api.token) as third:
                await acknowledged(third)
                await subscribe(third, f"retry{attempt}", GAME_UPDATES, t=table)
                try:
                    message = await receive(third)
                except ConnectionClosed:
                    await asyncio.sleep(0.1)
                    continue
                assert message["type"] == "next" and "errors" not in message["payload"]
                break
        else:
            pytest.fail("a completed subscription never freed its slot")
