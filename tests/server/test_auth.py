"""Accounts and tokens: sign up, sign in, `me`, and the bearer token on HTTP and on
WebSocket (connection_init payload or upgrade header; a bad payload token closes 4401)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from tests.support.client import SIGN_UP, ApiError
from tests.support.scenarios import (
    GAME_UPDATES,
    SIGN_IN,
    FastApi,
    SeatedTable,
    first_event,
    seat_four_humans,
)
from tests.support.server import LiveServer

ME = "{ me { id username } }"


@pytest.fixture
async def table(server: LiveServer) -> SeatedTable:
    """A started game of four humans."""
    return await seat_four_humans(server, seed=3)


async def me(server: LiveServer, token: str) -> dict[str, Any]:
    """`me` for a token."""
    return dict((await FastApi(server, token=token).call(ME))["me"])


async def test_sign_up_returns_a_working_token_and_the_player(server: LiveServer) -> None:
    data = (await FastApi(server).call(SIGN_UP, u="Alice_01", p="password123"))["signUp"]
    assert isinstance(data["token"], str) and len(data["token"]) >= 20
    assert data["player"]["username"] == "Alice_01"
    assert data["player"]["id"]
    assert await me(server, data["token"]) == data["player"]


async def test_sign_in_returns_a_new_token_for_the_same_player(server: LiveServer) -> None:
    up = (await FastApi(server).call(SIGN_UP, u="bob_signs_in", p="s3cret-pass"))["signUp"]
    first = (await FastApi(server).call(SIGN_IN, u="bob_signs_in", p="s3cret-pass"))["signIn"]
    second = (await FastApi(server).call(SIGN_IN, u="bob_signs_in", p="s3cret-pass"))["signIn"]
    assert first["player"] == second["player"] == up["player"]
    assert len({up["token"], first["token"], second["token"]}) == 3
    for token in (up["token"], first["token"], second["token"]):  # every token stays valid
        assert await me(server, token) == up["player"]


async def test_sign_in_ignores_the_case_of_the_username(server: LiveServer) -> None:
    up = (await FastApi(server).call(SIGN_UP, u="CaseyCase", p="password123"))["signUp"]
    for spelling in ("caseycase", "CASEYCASE", "CaseyCase"):
        signed = (await FastApi(server).call(SIGN_IN, u=spelling, p="password123"))["signIn"]
        assert signed["player"] == up["player"]  # the username keeps its signed-up case


async def test_usernames_are_unique_ignoring_case(server: LiveServer) -> None:
    await FastApi(server).call(SIGN_UP, u="Unique_Name", p="password123")
    for spelling in ("unique_name", "UNIQUE_NAME", "uNiQuE_nAmE"):
        with pytest.raises(ApiError) as refused:
            await FastApi(server).call(SIGN_UP, u=spelling, p="password123")
        assert refused.value.code == "BAD_USER_INPUT"
    # The first account still signs in with its password.
    await FastApi(server).call(SIGN_IN, u="Unique_Name", p="password123")


async def test_the_password_is_checked_exactly(server: LiveServer) -> None:
    await FastApi(server).call(SIGN_UP, u="exact_pw", p="Password123")
    for wrong in ("password123", "Password123 ", "Password12"):
        with pytest.raises(ApiError) as refused:
            await FastApi(server).call(SIGN_IN, u="exact_pw", p=wrong)
        assert refused.value.code == "UNAUTHENTICATED"


async def test_me_is_the_caller(server: LiveServer) -> None:
    alice = await FastApi(server).sign_up()
    bob = await FastApi(server).sign_up()
    assert (await alice.call(ME))["me"] == {"id": alice.player_id, "username": alice.username}
    assert (await bob.call(ME))["me"] == {"id": bob.player_id, "username": bob.username}


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER"])
async def test_the_bearer_token_works_on_http_post_and_get(server: LiveServer, scheme: str) -> None:
    alice = await FastApi(server).sign_up()
    headers = {"Authorization": f"{scheme} {alice.token}"}
    async with httpx.AsyncClient(timeout=10) as client:
        posted = await client.post(server.http_url, json={"query": ME}, headers=headers)
        got = await client.get(server.http_url, params={"query": ME}, headers=headers)
    for response in (posted, got):
        assert response.status_code == 200, response.text
        assert response.json()["data"]["me"]["id"] == alice.player_id


async def test_a_token_must_come_with_the_bearer_scheme(server: LiveServer) -> None:
    alice = await FastApi(server).sign_up()
    async with httpx.AsyncClient(timeout=10) as client:
        for value in (alice.token, f"Basic {alice.token}", f"Token {alice.token}"):
            response = await client.post(
                server.http_url, json={"query": ME}, headers={"Authorization": str(value)}
            )
            assert response.json()["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("key", ["Authorization", "authorization"])
async def test_websocket_auth_by_connection_init_payload(
    server: LiveServer, table: SeatedTable, key: str
) -> None:
    for seat in ("NORTH", "EAST"):
        player = table.players[seat]
        update = await first_event(
            server, GAME_UPDATES, init_payload={key: f"Bearer {player.token}"}, t=table.table_id
        )
        assert not isinstance(update, ApiError), update
        view = update["gameUpdates"]["view"]
        assert update["gameUpdates"]["event"] == "SNAPSHOT"
        assert view["viewerSeat"] == seat and len(view["hand"]) == 13


async def test_websocket_auth_by_upgrade_request_header(
    server: LiveServer, table: SeatedTable
) -> None:
    for seat in ("SOUTH", "WEST"):
        player = table.players[seat]
        update = await first_event(
            server,
            GAME_UPDATES,
            headers={"Authorization": f"Bearer {player.token}"},
            t=table.table_id,
        )
        assert not isinstance(update, ApiError), update
        view = update["gameUpdates"]["view"]
        assert view["viewerSeat"] == seat and len(view["hand"]) == 13


async def init_answer(server: LiveServer, payload: dict[str, Any]) -> dict[str, Any] | int:
    """Speak graphql-transport-ws by hand: the server's answer to connection_init (a
    message), or the close code if it closed the socket instead."""
    async with connect(server.ws_url, subprotocols=[Subprotocol("graphql-transport-ws")]) as socket:
        await socket.send(json.dumps({"type": "connection_init", "payload": payload}))
        try:
            return dict(json.loads(await socket.recv()))
        except ConnectionClosed as closed:
            assert closed.rcvd is not None
            return int(closed.rcvd.code)


@pytest.mark.parametrize(
    "payload",
    [
        {"Authorization": "Bearer not-a-real-token"},
        {"Authorization": "Bearer "},
        {"Authorization": ""},
        {"Authorization": "not-a-real-token"},
        {"Authorization": 12345},
        {"authorization": "Bearer " + "x" * 10_000},
    ],
    ids=["unknown", "empty-bearer", "empty", "no-scheme", "number", "huge"],
)
async def test_an_invalid_token_in_connection_init_closes_with_4401(
    server: LiveServer, payload: dict[str, Any]
) -> None:
    assert await init_answer(server, payload) == 4401


async def test_a_valid_token_in_connection_init_is_acknowledged(server: LiveServer) -> None:
    alice = await FastApi(server).sign_up()
    answer = await init_answer(server, {"Authorization": f"Bearer {alice.token}"})
    assert isinstance(answer, dict) and answer["type"] == "connection_ack", answer
