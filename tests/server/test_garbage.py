"""A move and its fan-out leave nothing to the cycle collector: everything they allocate
is freed by reference counting as soon as it is done (so the young generation stays
small and full collections do not pause the server under load).

The server runs with a garbage probe (tests/support/gc_probe.py): every object the cycle
collector finds is kept and counted, and the test reads the count over N moves, each
made over HTTP (a `game` query and the move's mutation) and pushed to every seat's and
two spectators' WebSocket subscriptions."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.client import Api, next_update
from tests.support.scenarios import GAME_UPDATES, SeatedTable, seat_four_humans
from tests.support.server import LiveServer
from tests.support.social import Social

PROBE = "from tests.support.gc_probe import main; main()"
MOVES = 40
# Room for cyclic garbage that is not the hot path's (a timer, a closed connection); the
# hot path itself leaves none. Before the mends a move left ~700 objects to the collector
# (graphql-core's executors referring to themselves, with everything they held).
MOST_PER_MOVE = 0.5


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LiveServer, Path]]:
    """A server running with the garbage probe, and the file it reports to."""
    directory = tmp_path_factory.mktemp("garbage")
    out = directory / "garbage.json"
    live = LiveServer(directory / "spades.db", env={"SPADES_GC_PROBE_OUT": str(out)}, entry=PROBE)
    live.start()
    yield live, out
    live.stop()


async def cyclic_garbage(server: LiveServer, out: Path) -> dict[str, Any]:
    """What the cycle collector found since the last reading."""
    out.unlink(missing_ok=True)
    assert server.process is not None
    server.process.send_signal(signal.SIGUSR1)
    for _ in range(200):
        if out.exists():
            figures: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
            return figures
        await asyncio.sleep(0.025)
    raise AssertionError("the probe did not report")


@asynccontextmanager
async def watched(table: SeatedTable, spectators: list[Api]) -> AsyncIterator[list[Any]]:
    """Every seat and spectator subscribed (past their SNAPSHOT)."""
    async with AsyncExitStack() as stack:
        queues = []
        for api in [*table.players.values(), *spectators]:
            queue = await stack.enter_async_context(api.subscribe(GAME_UPDATES, t=table.table_id))
            assert (await next_update(queue))["gameUpdates"]["event"] == "SNAPSHOT"
            queues.append(queue)
        yield queues


async def play(table: SeatedTable, queues: list[Any], moves: int) -> None:
    """`moves` moves (bids of 3, then first legal cards), each seen by every subscriber."""
    view = await table.view()
    for _ in range(moves):
        player = table.players[view["turn"]]
        own = await player.game(table.table_id)
        if own["phase"] == "BIDDING":
            if own["handWithheld"]:
                await player.reveal(table.table_id)
                for queue in queues:
                    await next_update(queue)
            view = await player.bid(table.table_id, "TRICKS", 3)
        else:
            view = await player.play(table.table_id, own["legalPlays"][0])
        for queue in queues:
            while (await next_update(queue))["gameUpdates"]["view"]["version"] < view["version"]:
                pass


@pytest.mark.fastpath
async def test_moves_and_their_fan_out_leave_no_cyclic_garbage(
    probed: tuple[LiveServer, Path],
) -> None:
    server, out = probed
    table = await seat_four_humans(server, seed=5)
    spectators: list[Api] = []
    for _ in range(2):
        spectator = await Social(server).sign_up()
        await spectator.watch(table.table_id)
        spectators.append(spectator)
    async with watched(table, spectators) as queues:
        await play(table, queues, 8)  # warm every path (bids, reveals, cards) up once
        await asyncio.sleep(0.2)
        await cyclic_garbage(server, out)
        await play(table, queues, MOVES)
        await asyncio.sleep(0.2)
        found = await cyclic_garbage(server, out)
        print("cyclic garbage over", MOVES, "moves:", found)
        assert found["garbage"] <= MOST_PER_MOVE * MOVES, json.dumps(found["types"], indent=0)
