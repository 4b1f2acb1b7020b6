"""An idle `gameUpdates` subscription waits with no task of its own (it *parks*:
app/services/live/followed.py); what it receives is unchanged, a change handed back to
it runs it again, and its end (complete, stop, the socket closing) lets go of all it
held. `spades_parked_subscriptions` (/metrics) counts the parked ones."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from websockets.asyncio.client import ClientConnection, connect
from websockets.typing import Subprotocol

from tests.security.helpers import receive, subscribe, ws_connection
from tests.support.client import Api
from tests.support.play import GAME_UPDATES
from tests.support.server import LiveServer

# Parking and shared executions are the fast path's (app/api/fastpath/).
pytestmark = pytest.mark.fastpath


async def gauges(server: LiveServer) -> dict[str, float]:
    """The parked and the active game subscriptions, from /metrics."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.get(f"http://127.0.0.1:{server.port}/metrics")
    found = {"parked": 0.0, "game": 0.0}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            if sample.name == "spades_parked_subscriptions":
                found["parked"] = sample.value
            elif sample.name == "spades_active_subscriptions" and sample.labels["kind"] == "game":
                found["game"] = sample.value
    return found


async def settles_at(server: LiveServer, parked: float, game: float) -> None:
    """Wait until the gauges read `parked` and `game` (they follow the server's tasks)."""
    for _ in range(100):
        if await gauges(server) == {"parked": parked, "game": game}:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"gauges stayed at {await gauges(server)}, not {parked}/{game}")


async def next_message(socket: ClientConnection) -> dict[str, Any]:
    """The next message that is no keep-alive (the legacy protocol sends `ka`)."""
    while (message := await receive(socket))["type"] == "ka":
        pass
    return message


async def update(message: dict[str, Any]) -> dict[str, Any]:
    assert message["type"] in ("next", "data") and "errors" not in message["payload"], message
    return dict(message["payload"]["data"]["gameUpdates"])


async def test_an_idle_subscription_parks_and_a_seat_taken_runs_it_again(
    server: LiveServer,
) -> None:
    alice = await Api(server).sign_up()
    bob = await Api(server).sign_up()
    table = await alice.create_table(name="parked")
    before = await gauges(server)
    async with ws_connection(server, alice.token) as socket:
        assert (await receive(socket))["type"] == "connection_ack"
        await subscribe(socket, "g", GAME_UPDATES, t=table["id"])
        assert (await update(await receive(socket)))["event"] == "SNAPSHOT"
        await settles_at(server, before["parked"] + 1, before["game"] + 1)
        # A seating change is handed back to the stream (presence counts seats): the
        # parked operation runs again, delivers it, and parks again.
        await bob.join(table["id"], "EAST")
        taken = await update(await receive(socket))
        assert (taken["event"], taken["seat"]) == ("SEAT_TAKEN", "EAST")
        await settles_at(server, before["parked"] + 1, before["game"] + 1)
        await socket.send(json.dumps({"id": "g", "type": "complete"}))
        await settles_at(server, before["parked"], before["game"])
        # The operation id is free again, and a new subscription under it works.
        await subscribe(socket, "g", GAME_UPDATES, t=table["id"])
        assert (await update(await receive(socket)))["event"] == "SNAPSHOT"
        await settles_at(server, before["parked"] + 1, before["game"] + 1)
    # The socket closed: what the parked subscription held is let go.
    await settles_at(server, before["parked"], before["game"])


async def test_a_parked_legacy_operation_answers_its_stop_with_complete(
    server: LiveServer,
) -> None:
    alice = await Api(server).sign_up()
    table = await alice.create_table(name="parked-legacy")
    before = await gauges(server)
    async with connect(server.ws_url, subprotocols=[Subprotocol("graphql-ws")]) as socket:
        init = {"type": "connection_init", "payload": {"Authorization": f"Bearer {alice.token}"}}
        await socket.send(json.dumps(init))
        assert (await next_message(socket))["type"] == "connection_ack"
        start = {"query": GAME_UPDATES, "variables": {"t": table["id"]}}
        await socket.send(json.dumps({"id": "1", "type": "start", "payload": start}))
        assert (await update(await next_message(socket)))["event"] == "SNAPSHOT"
        await settles_at(server, before["parked"] + 1, before["game"] + 1)
        await socket.send(json.dumps({"id": "1", "type": "stop"}))
        assert await next_message(socket) == {"type": "complete", "id": "1"}
        await settles_at(server, before["parked"], before["game"])
