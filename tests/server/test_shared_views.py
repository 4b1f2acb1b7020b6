"""Identical views are executed and serialized once per change: every spectator of a
table, and every subscription of one seat with the same document, share one execution,
one JSON encoding and one frame of each update; different viewers (seats, spectators) and
different documents never share, so nobody receives another's view."""

from __future__ import annotations

import asyncio
import json
from contextlib import AsyncExitStack
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from tests.support.client import Api, next_update
from tests.support.scenarios import GAME_UPDATES, SEATS, seat_four_humans
from tests.support.server import LiveServer
from tests.support.social import Social

# Another selection of the same subscription: its own execution, never another's.

# Parking and shared executions are the fast path's (app/api/fastpath/).
pytestmark = pytest.mark.fastpath

VERSION_AND_HAND = (
    "subscription($t: ID!) { gameUpdates(tableId: $t) "
    "{ event view { version viewerSeat hand { suit rank } } } }"
)
SPECTATORS = 3


async def counters(server: LiveServer) -> dict[tuple[str, str], float]:
    """The sharing counters of /metrics, by (name, outcome)."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"http://127.0.0.1:{server.port}/metrics")
    found: dict[tuple[str, str], float] = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name.startswith("spades_subscription_"):
                found[(sample.name, sample.labels.get("outcome", ""))] = sample.value
    return found


def delta(before: dict[tuple[str, str], float], after: dict[tuple[str, str], float]) -> Any:
    return {k: after[k] - before.get(k, 0.0) for k in after if after[k] != before.get(k, 0.0)}


def hand(view: dict[str, Any]) -> frozenset[tuple[str, str]]:
    return frozenset((c["suit"], c["rank"]) for c in view["hand"] or ())


async def test_spectators_and_same_seat_subscriptions_share_one_execution_per_change(
    fresh_server: LiveServer,
) -> None:
    table = await seat_four_humans(fresh_server, seed=11)
    tid = table.table_id
    spectators: list[Api] = []
    for _ in range(SPECTATORS):
        spectator = await Social(fresh_server).sign_up()
        await spectator.watch(tid)
        spectators.append(spectator)
    async with AsyncExitStack() as stack:
        subscriptions: list[tuple[str, str, Any]] = []  # (who, document, queue)

        async def subscribe(who: str, api: Api, document: str) -> None:
            queue = await stack.enter_async_context(api.subscribe(document, t=tid))
            assert (await next_update(queue))["gameUpdates"]["event"] == "SNAPSHOT"
            subscriptions.append((who, document, queue))

        for seat in SEATS:
            await subscribe(seat, table.players[seat], GAME_UPDATES)
        await subscribe("NORTH", table.players["NORTH"], GAME_UPDATES)  # a second tab
        await subscribe("NORTH", table.players["NORTH"], VERSION_AND_HAND)
        for spectator in spectators:
            await subscribe("spectator", spectator, GAME_UPDATES)

        before = await counters(fresh_server)
        player = await table.on_turn()
        moved = await player.bid(tid, "TRICKS", 3)
        received = []
        for who, document, queue in subscriptions:
            update = (await next_update(queue))["gameUpdates"]
            assert update["view"]["version"] == moved["version"]
            received.append((who, document, update))
        after = await counters(fresh_server)

    # Executed, encoded and framed once per distinct (viewer, document): 4 seats, NORTH's
    # other document, the spectators; the frame (same operation id on every socket of
    # this client) written as is to NORTH's second tab and the other spectators.
    ran = len(SEATS) + 1 + 1
    shared = 1 + (SPECTATORS - 1)
    assert delta(before, after) == {
        ("spades_subscription_executions_total", "ran"): ran,
        ("spades_subscription_encodings_total", "encoded"): ran,
        ("spades_subscription_frames_total", "built"): ran,
        ("spades_subscription_frames_total", "shared"): shared,
    }
    # Nobody received another's view: each seat its own hand, spectators none.
    hands = {}
    for who, document, update in received:
        view = update["view"]
        if who == "spectator":
            assert view["viewerSeat"] is None and view["hand"] is None
            continue
        assert view["viewerSeat"] == who and len(hand(view)) == 13
        hands.setdefault(who, set()).add(hand(view))
        if document == VERSION_AND_HAND:
            assert set(view) == {"version", "viewerSeat", "hand"}
    assert all(len(h) == 1 for h in hands.values())  # one seat, one hand, every document
    assert len(set().union(*hands.values())) == len(SEATS)  # four different hands
    tabs = [u for who, d, u in received if who == "NORTH" and d == GAME_UPDATES]
    assert tabs[0] == tabs[1]


async def test_spectators_with_different_operation_ids_share_one_execution_and_encoding(
    fresh_server: LiveServer,
) -> None:
    table = await seat_four_humans(fresh_server, seed=12)
    tid = table.table_id
    ids = ["a", "7", "spectator-three"]
    async with AsyncExitStack() as stack:
        sockets = []
        for operation_id in ids:
            spectator = await Social(fresh_server).sign_up()
            await spectator.watch(tid)
            ws = await stack.enter_async_context(
                connect(fresh_server.ws_url, subprotocols=[Subprotocol("graphql-transport-ws")])
            )
            init = {"Authorization": f"Bearer {spectator.token}"}
            await ws.send(json.dumps({"type": "connection_init", "payload": init}))
            assert json.loads(await ws.recv())["type"] == "connection_ack"
            start = {"query": GAME_UPDATES, "variables": {"t": tid}}
            await ws.send(json.dumps({"id": operation_id, "type": "subscribe", "payload": start}))
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 10))
            assert snapshot["payload"]["data"]["gameUpdates"]["event"] == "SNAPSHOT"
            sockets.append(ws)

        before = await counters(fresh_server)
        player = await table.on_turn()
        moved = await player.bid(tid, "TRICKS", 3)
        texts = [await asyncio.wait_for(ws.recv(), 10) for ws in sockets]
        after = await counters(fresh_server)

    # One execution and one JSON encoding of the spectators' view; a frame per operation
    # id (its text names the id), each around that one encoding.
    assert delta(before, after) == {
        ("spades_subscription_executions_total", "ran"): 1,
        ("spades_subscription_executions_total", "shared"): len(ids) - 1,
        ("spades_subscription_encodings_total", "encoded"): 1,
        ("spades_subscription_encodings_total", "shared"): len(ids) - 1,
        ("spades_subscription_frames_total", "built"): len(ids),
    }
    data = {json.dumps(json.loads(t)["payload"]) for t in texts}
    assert len(data) == 1
    for operation_id, text in zip(ids, texts, strict=True):
        message = json.loads(text)
        assert message["id"] == operation_id and message["type"] == "next"
        assert message["payload"]["data"]["gameUpdates"]["view"]["version"] == moved["version"]
