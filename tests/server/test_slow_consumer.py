"""A client that stops reading its WebSocket neither delays the other subscribers nor
makes the server hold its updates without bound: once a send to it waits longer than the
send timeout, the server closes it with 4410 ("too slow: reconnect and resubscribe with
since", docs/api.md)."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from tests.support.client import next_update
from tests.support.scenarios import GAME_UPDATES, SEATS, SeatedTable, seat_four_humans
from tests.support.server import LiveServer
from tests.support.social import Social

SEND_TIMEOUT_MS = 1000
# Many subscriptions on the slow socket fill its buffers (the kernel may grow its send
# buffer up to 4 MiB) in a few dozen moves.
SLOW_SUBSCRIPTIONS = 100
MOVES = 40


@pytest.fixture
def impatient(tmp_path: Path) -> Iterator[LiveServer]:
    """A server with a short send timeout, and room for many subscriptions."""
    env = {
        "SPADES_WS_SEND_TIMEOUT_MS": str(SEND_TIMEOUT_MS),
        "SPADES_SUBSCRIPTIONS_PER_PLAYER": str(SLOW_SUBSCRIPTIONS + 5),
    }
    live = LiveServer(tmp_path / "spades.db", env=env)
    live.start()
    yield live
    live.stop()


async def receive(ws: ClientConnection) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), 10)))


async def stalled_spectator(server: LiveServer, token: str, table_id: str) -> ClientConnection:
    """A spectator's socket with a tiny receive buffer, subscribed many times to the
    table, past its SNAPSHOTs; from then on nobody reads it."""
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.setblocking(False)
    await asyncio.get_running_loop().sock_connect(raw, ("127.0.0.1", server.port))
    ws = await connect(
        server.ws_url,
        sock=raw,
        subprotocols=[Subprotocol("graphql-transport-ws")],
        max_queue=1,  # stop reading the socket as soon as one frame waits
        open_timeout=10,
        close_timeout=2,
    )
    init = {"type": "connection_init", "payload": {"Authorization": f"Bearer {token}"}}
    await ws.send(json.dumps(init))
    assert (await receive(ws))["type"] == "connection_ack"
    for n in range(SLOW_SUBSCRIPTIONS):
        payload = {"query": GAME_UPDATES, "variables": {"t": table_id}}
        await ws.send(json.dumps({"id": str(n), "type": "subscribe", "payload": payload}))
    for _ in range(SLOW_SUBSCRIPTIONS):
        assert (await receive(ws))["payload"]["data"]["gameUpdates"]["event"] == "SNAPSHOT"
    return ws


async def play(table: SeatedTable, moves: int, queues: dict[str, Any]) -> None:
    """Bids and first legal cards; every player's subscription sees each move."""
    view = await table.view()
    for _ in range(moves):
        player = table.players[view["turn"]]
        own = await player.game(table.table_id)
        if own["phase"] == "BIDDING":
            view = await player.bid(table.table_id, "TRICKS", 3)
        else:
            view = await player.play(table.table_id, own["legalPlays"][0])
        for queue in queues.values():  # a trick's last card: CARD_PLAYED, TRICK_WON
            while (await next_update(queue))["gameUpdates"]["view"]["version"] < view["version"]:
                pass
        await asyncio.sleep(SEND_TIMEOUT_MS / 1000 / 8)


async def test_a_client_that_stops_reading_is_closed_with_4410_and_delays_nobody(
    impatient: LiveServer,
) -> None:
    table = await seat_four_humans(impatient, seed=3)
    spectator = await Social(impatient).sign_up()
    await spectator.watch(table.table_id)
    assert spectator.token is not None
    slow = await stalled_spectator(impatient, spectator.token, table.table_id)
    async with AsyncExitStack() as stack:
        queues = {}
        for seat in SEATS:
            api = table.players[seat]
            queue = await stack.enter_async_context(api.subscribe(GAME_UPDATES, t=table.table_id))
            assert (await next_update(queue))["gameUpdates"]["event"] == "SNAPSHOT"
            queues[seat] = queue
        # Every player gets every move in turn while the spectator reads nothing.
        await play(table, MOVES, queues)
    # The spectator reads again: what was sent before, then the close.
    with pytest.raises(ConnectionClosed) as closed:
        for _ in range(SLOW_SUBSCRIPTIONS * MOVES + 10):
            await asyncio.wait_for(slow.recv(), 10)
    assert closed.value.rcvd is not None
    assert closed.value.rcvd.code == 4410
    assert closed.value.rcvd.reason == "too slow: reconnect and resubscribe with since"
