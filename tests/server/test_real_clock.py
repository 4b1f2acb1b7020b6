"""One game against three bots on a real 5-second turn clock, end to end (no shortened
timings), and a restart with a turn already overdue: played for at once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.live import LIVE_GAME, game_updates, hosting_bots, instant, seat_of
from tests.support.scenarios import signed_up
from tests.support.server import LiveServer


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server of its own with real turn clocks (the tests restart it)."""
    live = LiveServer(tmp_path / "spades.db", env={"SPADES_TURN_CLOCK_SCALE": "1"})
    live.start()
    yield live
    live.stop()


async def test_a_silent_human_is_played_for_after_5_real_seconds(
    fresh_server: LiveServer,
) -> None:
    (host,) = await signed_up(fresh_server, 1)
    async with hosting_bots(host, seed=21, turnSeconds=5) as (_, updates):
        # Bots bid first (dealer NORTH: EAST, SOUTH, WEST), then NORTH's turn starts.
        turn = await updates.until(lambda u: u["view"]["turn"] == "NORTH", timeout=10)
        started = time.time()
        deadline = instant(turn["view"]["turnDeadline"])
        assert 4.0 <= deadline - started <= 5.5
        timed = await updates.until(lambda u: u["event"] == "TURN_TIMED_OUT", timeout=10)
        fired = time.time()
        assert timed["seat"] == "NORTH"
        assert deadline - 0.05 <= fired <= deadline + 1.5
        bid = await updates.next()
        assert (bid["event"], bid["seat"]) == ("BID_PLACED", "NORTH")
        assert seat_of(bid["view"], "NORTH")["bid"]["kind"] == "TRICKS"
        assert seat_of(bid["view"], "NORTH")["isBot"] is False  # one timeout: not replaced


async def test_a_turn_overdue_at_start_up_is_played_for_at_once(fresh_server: LiveServer) -> None:
    (host,) = await signed_up(fresh_server, 1)
    table_id = (await host.create_table(seed=21, turnSeconds=5))["id"]
    for seat in ("EAST", "SOUTH", "WEST"):
        await host.add_bot(table_id, seat)
    for _ in range(50):
        view = (await host.call(LIVE_GAME, t=table_id))["game"]
        if view["turn"] == "NORTH":
            break
        await asyncio.sleep(0.1)
    deadline = instant(view["turnDeadline"])
    fresh_server.stop()  # nobody is left to fire NORTH's clock
    await asyncio.sleep(max(0.0, deadline - time.time() + 1.0))
    fresh_server.start()
    async with game_updates(host, table_id, since=view["version"]) as updates:
        timed = await updates.next(timeout=5)
        assert (timed["event"], timed["seat"]) == ("TURN_TIMED_OUT", "NORTH")
        assert timed["view"]["version"] == view["version"] + 1
        bid = await updates.next()
        assert (bid["event"], bid["seat"]) == ("BID_PLACED", "NORTH")
