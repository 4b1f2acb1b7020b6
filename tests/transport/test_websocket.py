"""Both subscription protocols on /graphql, chosen by subprotocol, with the same auth,
`since` and close codes; any other subprotocol refused at the handshake."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.typing import Subprotocol

from tests.support.client import Api
from tests.support.play import GAME_UPDATES, take_turn
from tests.support.server import LiveServer, running

from .clients import run_node

LEGACY = Subprotocol("graphql-ws")
TRANSPORT = Subprotocol("graphql-transport-ws")


@asynccontextmanager
async def legacy(server: LiveServer, token: str | None) -> AsyncIterator[ClientConnection]:
    """A legacy graphql-ws connection, acknowledged."""
    async with connect(server.ws_url, subprotocols=[LEGACY]) as socket:
        assert socket.subprotocol == "graphql-ws"
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        await socket.send(json.dumps({"type": "connection_init", "payload": payload}))
        assert (await receive(socket))["type"] == "connection_ack"
        yield socket


@asynccontextmanager
async def initialised(
    server: LiveServer, protocol: Subprotocol, token: str | None
) -> AsyncIterator[ClientConnection]:
    """An acknowledged connection of either protocol."""
    if protocol == LEGACY:
        async with legacy(server, token) as socket:
            yield socket
        return
    async with connect(server.ws_url, subprotocols=[TRANSPORT]) as socket:
        payload = {"Authorization": f"Bearer {token}"} if token else {}
        await socket.send(json.dumps({"type": "connection_init", "payload": payload}))
        assert (await receive(socket))["type"] == "connection_ack"
        yield socket


async def receive(socket: ClientConnection, skip_keep_alive: bool = True) -> dict[str, Any]:
    while True:
        message = dict(json.loads(await asyncio.wait_for(socket.recv(), 10)))
        if not (skip_keep_alive and message["type"] == "ka"):
            return message


async def close_of(socket: ClientConnection) -> tuple[int, str]:
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await asyncio.wait_for(socket.recv(), 10)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code, closed.value.rcvd.reason


async def bidding_table(server: LiveServer) -> tuple[Api, str]:
    """A signed-up player at NORTH with three bots: the game is bidding."""
    alice = await Api(server).sign_up()
    table = await alice.create_table(name="legacy", seed=5)
    for seat in ("EAST", "SOUTH", "WEST"):
        await alice.add_bot(table["id"], seat)
    return alice, str(table["id"])


async def own_turn(api: Api, table_id: str) -> dict[str, Any]:
    """The caller's view once it is their turn."""
    for _ in range(200):
        view = await api.game(table_id)
        if view["turn"] == view["viewerSeat"]:
            return view
        await asyncio.sleep(0.05)
    raise AssertionError("never the caller's turn")


async def test_the_legacy_protocol_delivers_a_snapshot_then_the_updates_of_a_move(
    server: LiveServer,
) -> None:
    alice, table_id = await bidding_table(server)
    async with legacy(server, alice.token) as socket:
        start = {"query": GAME_UPDATES, "variables": {"t": table_id}}
        await socket.send(json.dumps({"id": "1", "type": "start", "payload": start}))
        snapshot = await receive(socket)
        assert snapshot["type"] == "data" and snapshot["id"] == "1", snapshot
        first = snapshot["payload"]["data"]["gameUpdates"]
        assert first["event"] == "SNAPSHOT"
        view = first["view"]
        while view["turn"] != view["viewerSeat"]:
            message = await receive(socket)
            view = message["payload"]["data"]["gameUpdates"]["view"]
        await take_turn(alice, table_id, view)
        versions = [view["version"]]
        updates = [(await receive(socket))["payload"]["data"]["gameUpdates"] for _ in range(2)]
        versions += [u["view"]["version"] for u in updates]
        # The caller's bid, then the next move (a bot's bid or the first card).
        assert (updates[0]["event"], updates[0]["seat"]) == ("BID_PLACED", view["viewerSeat"])
        assert versions == list(range(versions[0], versions[0] + len(versions)))
        await socket.send(json.dumps({"id": "1", "type": "stop"}))
        while (message := await receive(socket))["type"] == "data":
            pass  # updates already on their way when the stop arrived
        assert message == {"type": "complete", "id": "1"}
        await socket.send(json.dumps({"type": "connection_terminate"}))
        assert (await close_of(socket))[0] == 1000


async def test_the_legacy_protocol_resumes_with_since(server: LiveServer) -> None:
    alice, table_id = await bidding_table(server)
    view = await alice.game(table_id)
    async with legacy(server, alice.token) as socket:
        query = (
            "subscription($t: ID!, $s: Int) { gameUpdates(tableId: $t, since: $s) "
            "{ event view { version } } }"
        )
        start = {"query": query, "variables": {"t": table_id, "s": view["version"] - 2}}
        await socket.send(json.dumps({"id": "s", "type": "start", "payload": start}))
        got = [(await receive(socket))["payload"]["data"]["gameUpdates"] for _ in range(2)]
        assert [u["view"]["version"] for u in got] == [view["version"] - 1, view["version"]]
        assert "SNAPSHOT" not in [u["event"] for u in got]


async def test_the_legacy_protocol_sends_keep_alives(server: LiveServer) -> None:
    async with legacy(server, None) as socket:
        assert (await receive(socket, skip_keep_alive=False))["type"] == "ka"


async def test_a_bad_token_is_refused_on_both_protocols_with_4401(server: LiveServer) -> None:
    for protocol in (LEGACY, TRANSPORT):
        async with connect(server.ws_url, subprotocols=[protocol]) as socket:
            init = {"type": "connection_init", "payload": {"Authorization": "Bearer nope"}}
            await socket.send(json.dumps(init))
            if protocol == LEGACY:
                error = await receive(socket)
                assert error["type"] == "connection_error"
                assert error["payload"]["message"] == "invalid or expired token"
            assert await close_of(socket) == (4401, "invalid or expired token")


async def test_signing_out_closes_a_legacy_connection_with_4401(server: LiveServer) -> None:
    alice = await Api(server).sign_up()
    async with legacy(server, alice.token) as socket:
        await asyncio.sleep(0.2)
        await alice.call("mutation { signOut }")
        assert await close_of(socket) == (4401, "token revoked")


async def test_an_operation_error_on_the_legacy_protocol_carries_its_code(
    server: LiveServer,
) -> None:
    async with legacy(server, None) as socket:
        for operation, query, expected in [
            ("a", "subscription { nope }", "GRAPHQL_VALIDATION_FAILED"),
            ("b", "subscription { lobbyUpdates { event } ", "GRAPHQL_PARSE_FAILED"),
        ]:
            start = {"id": operation, "type": "start", "payload": {"query": query}}
            await socket.send(json.dumps(start))
            error = await receive(socket)
            assert (error["type"], error["id"]) == ("error", operation), error
            assert error["payload"]["extensions"]["code"] == expected
        start = {"query": "subscription { lobbyUpdates { event } }"}
        await socket.send(json.dumps({"id": "c", "type": "start", "payload": start}))
        answer = await receive(socket)
        assert answer["payload"]["errors"][0]["extensions"]["code"] == "UNAUTHENTICATED"


async def test_a_malformed_legacy_message_closes_with_4400(server: LiveServer) -> None:
    async with legacy(server, None) as socket:
        await socket.send(json.dumps({"id": 5, "type": "start", "payload": None}))
        assert (await close_of(socket))[0] == 4400


@pytest.mark.parametrize(
    "offered", [["graphql-sse"], ["mqtt"], None], ids=["other-graphql", "unrelated", "none"]
)
async def test_an_unknown_subprotocol_is_refused_at_the_handshake(
    server: LiveServer, offered: list[str] | None
) -> None:
    protocols = None if offered is None else [Subprotocol(p) for p in offered]
    with pytest.raises(InvalidStatus) as refused:
        async with connect(server.ws_url, subprotocols=protocols):
            pass
    assert refused.value.response.status_code == 400
    assert b"graphql-transport-ws" in refused.value.response.body


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (["graphql-transport-ws"], "graphql-transport-ws"),
        (["graphql-ws"], "graphql-ws"),
        (["graphql-ws", "graphql-transport-ws"], "graphql-transport-ws"),
        (["mqtt", "graphql-ws"], "graphql-ws"),
    ],
)
async def test_the_upgrade_answer_names_the_subprotocol(
    server: LiveServer, offered: list[str], chosen: str
) -> None:
    async with connect(server.ws_url, subprotocols=[Subprotocol(p) for p in offered]) as socket:
        assert socket.subprotocol == chosen
        assert socket.response is not None
        assert socket.response.headers["Sec-WebSocket-Protocol"] == chosen


async def test_an_origin_not_allowed_closes_with_4403(tmp_path: Path) -> None:
    origins = {"SPADES_ALLOWED_ORIGINS": "http://ok.example"}
    with running(tmp_path / "spades.db", env=origins) as live:
        for protocol in (LEGACY, TRANSPORT):
            async with connect(
                live.ws_url,
                subprotocols=[protocol],
                origin="http://evil.example",  # type: ignore[arg-type]
            ) as socket:
                assert await close_of(socket) == (4403, "origin not allowed")
        async with connect(
            live.ws_url,
            subprotocols=[TRANSPORT],
            origin="http://ok.example",  # type: ignore[arg-type]
        ) as socket:
            await socket.send(json.dumps({"type": "connection_init"}))
            assert (await receive(socket))["type"] == "connection_ack"


def test_a_subscriptions_transport_ws_client_runs_every_kind_of_operation(
    server: LiveServer,
) -> None:
    # One socket: a query, a subscription (SNAPSHOT, then the updates of a move), a
    # refused mutation and the bid itself as a mutation.
    result = run_node("legacy_client.mjs", server.http_url, server.ws_url)
    assert result["me"].startswith("legacy"), result
    assert result["events"][0] == "SNAPSHOT", result
    assert "BID_PLACED" in result["events"], result
    versions = result["versions"]
    assert versions[1:] == list(range(versions[1], versions[1] + len(versions) - 1)), result
    assert result["refusedCode"] == "WRONG_PHASE", result
    # The refused move changed nothing: the bid is the very next version.
    assert result["myBidVersion"] == result["turnVersion"] + 1, result
    assert result["myBidVersion"] in versions, result
    assert result["bidCompleted"] is True, result


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_a_query_and_a_mutation_answer_their_data_on_both_protocols(
    server: LiveServer, protocol: Subprotocol
) -> None:
    alice = await Api(server).sign_up()
    start, data = {LEGACY: ("start", "data"), TRANSPORT: ("subscribe", "next")}[protocol]
    async with initialised(server, protocol, alice.token) as socket:
        operations = {
            "q": ("query { me { username } }", {}),
            "m": ('mutation { createTable(input: {name: "over ws"}) { id name } }', {}),
        }
        for number, (query, variables) in operations.items():
            payload = {"query": query, "variables": variables}
            await socket.send(json.dumps({"id": number, "type": start, "payload": payload}))
        answers = [await receive(socket) for _ in range(4)]
    by_id = {(a["id"], a["type"]): a for a in answers}
    assert by_id[("q", data)]["payload"] == {"data": {"me": {"username": alice.username}}}
    created = by_id[("m", data)]["payload"]["data"]["createTable"]
    assert created["name"] == "over ws"
    assert {("q", "complete"), ("m", "complete")} <= set(by_id), answers
    table = await alice.call("query($t: ID!) { table(id: $t) { name } }", t=created["id"])
    assert table["table"] == {"name": "over ws"}


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_a_refused_mutation_answers_its_code_and_changes_nothing_on_both_protocols(
    server: LiveServer, protocol: Subprotocol
) -> None:
    alice, table_id = await bidding_table(server)
    before = await own_turn(alice, table_id)  # the bots have bid: nothing else moves
    start, data = {LEGACY: ("start", "data"), TRANSPORT: ("subscribe", "next")}[protocol]
    async with initialised(server, protocol, alice.token) as socket:
        payload = {"query": PLAY_ACE, "variables": {"t": table_id}}
        await socket.send(json.dumps({"id": "x", "type": start, "payload": payload}))
        answer = await receive(socket)
        assert (answer["type"], answer["id"]) == (data, "x"), answer
        assert answer["payload"]["data"] is None
        assert [e["extensions"]["code"] for e in answer["payload"]["errors"]] == ["WRONG_PHASE"]
        assert await receive(socket) == {"type": "complete", "id": "x"}
    assert (await alice.game(table_id))["version"] == before["version"]


async def test_the_legacy_protocol_has_the_same_per_player_caps(tmp_path: Path) -> None:
    with running(
        tmp_path / "spades.db",
        env={"SPADES_WS_CONNECTIONS_PER_PLAYER": "1", "SPADES_SUBSCRIPTIONS_PER_PLAYER": "1"},
    ) as live:
        alice = await Api(live).sign_up()
        async with legacy(live, alice.token) as first:
            lobby = {"query": "subscription { lobbyUpdates { event } }"}
            await first.send(json.dumps({"id": "1", "type": "start", "payload": lobby}))
            async with connect(live.ws_url, subprotocols=[LEGACY]) as second:
                init = {
                    "type": "connection_init",
                    "payload": {"Authorization": f"Bearer {alice.token}"},
                }
                await second.send(json.dumps(init))
                assert (await receive(second))["type"] == "connection_error"
                code, reason = await close_of(second)
                assert code == 4429 and "at most 1" in reason, reason
            await first.send(json.dumps({"id": "2", "type": "start", "payload": lobby}))
            # One subscription too many: closed with 4429, the reason naming the limit.
            code, reason = await close_of(first)
            assert code == 4429 and "at most 1 live subscriptions" in reason, reason


async def test_a_socket_that_never_initialises_is_closed_on_both_protocols(
    tmp_path: Path,
) -> None:
    with running(tmp_path / "spades.db", env={"SPADES_WS_INIT_TIMEOUT_SECONDS": "1"}) as live:
        for protocol in (LEGACY, TRANSPORT):
            async with connect(live.ws_url, subprotocols=[protocol]) as socket:
                assert await close_of(socket) == (4408, "Connection initialisation timeout")


PLAY_ACE = (
    "mutation($t: ID!) { playCard(tableId: $t, card: {suit: SPADES, rank: ACE}) { version } }"
)


@pytest.mark.parametrize("protocol", [LEGACY, TRANSPORT])
async def test_an_operation_over_a_rate_limit_closes_the_socket_with_4429(
    tmp_path: Path, protocol: Subprotocol
) -> None:
    with running(tmp_path / "spades.db", env={"SPADES_RATE_LIMITS": "1"}) as live:
        alice = await Api(live).sign_up()
        table = str((await alice.create_table())["id"])  # waiting: a move is WRONG_PHASE
        start = "start" if protocol == LEGACY else "subscribe"
        async with initialised(live, protocol, alice.token) as socket:
            payload = {"query": PLAY_ACE, "variables": {"t": table}}
            # Within the limit, a refused move is an error message as usual.
            await socket.send(json.dumps({"id": "first", "type": start, "payload": payload}))
            answer = await receive(socket)
            assert answer["payload"]["errors"][0]["extensions"]["code"] == "WRONG_PHASE"
            for number in range(40):  # twice the moves allowed in a second
                message = {"id": str(number), "type": start, "payload": payload}
                await socket.send(json.dumps(message))
            codes: list[str] = []
            with pytest.raises(ConnectionClosed) as closed:
                while True:
                    answer = await receive(socket)
                    for error in (answer.get("payload") or {}).get("errors") or []:
                        codes.append(error["extensions"]["code"])
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4429
        assert "retry after" in closed.value.rcvd.reason, closed.value.rcvd.reason
        # The limit never came as an error message.
        assert "RATE_LIMITED" not in codes, codes
