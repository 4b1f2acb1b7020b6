"""Live tables across two server processes on one PostgreSQL and one Redis: a deadline
fires once (one timeout, one move made for the seat) with both processes watching it,
and still fires when the process that armed it is SIGKILLed; a SIGKILLed process's
players are shown disconnected to the others within 30 s; a player disconnected past the
reconnect window is replaced once, even when the process that saw them go is killed."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import pytest

from tests.support.live import game_updates, presence_updates, seat_of
from tests.support.server import LiveServer

from .harness import (
    Cluster,
    FastApi,
    assert_log_complete,
    logged_moves,
    move_log,
    on,
    two_processes,
)


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[Cluster]:
    """Processes A and B of their own (a test may kill one), on the real turn clock."""
    with two_processes(tmp_path, {"SPADES_TURN_CLOCK_SCALE": "1"}) as both:
        yield both


async def human_and_bots(server: LiveServer, seconds: int = 5) -> tuple[FastApi, str]:
    """A table on `server`: its host (NORTH, who will stay silent) and three bots."""
    host = await FastApi(server).sign_up()
    table_id = str((await host.create_table(seed=21, turnSeconds=seconds))["id"])
    return host, table_id


async def test_two_processes_one_deadline_one_timeout_one_move(pair: Cluster) -> None:
    host, table_id = await human_and_bots(pair.a)
    async with AsyncExitStack() as stack:
        on_a = await stack.enter_async_context(game_updates(host, table_id))
        on_b = await stack.enter_async_context(game_updates(on(host, pair.b), table_id))
        await on_a.next()
        await on_b.next()
        for seat in ("EAST", "SOUTH", "WEST"):
            await host.add_bot(table_id, seat)
        for updates in (on_a, on_b):
            await updates.until(lambda u: u["event"] == "TURN_TIMED_OUT", timeout=15)
            bid = await updates.next()
            assert (bid["event"], bid["seat"]) == ("BID_PLACED", "NORTH")
            await updates.quiet(2.0)  # both processes' sweeps have looked by now
        for updates in (on_a, on_b):
            assert updates.events.count("TURN_TIMED_OUT") == 1
            assert [u["seat"] for u in updates.items if u["event"] == "BID_PLACED"].count(
                "NORTH"
            ) == 1
            versions = updates.versions[1:]
            assert versions == list(range(versions[0], versions[0] + len(versions)))
    moves = await logged_moves(pair.database_url, table_id)
    assert [m for m in moves if m["type"] == "timeout"] == [{"type": "timeout", "seat": "NORTH"}]
    rows, version = await move_log(pair.database_url, table_id)
    assert_log_complete(rows, version)


async def test_a_deadline_fires_after_the_process_that_armed_it_is_killed(pair: Cluster) -> None:
    host, table_id = await human_and_bots(pair.a)
    async with game_updates(on(host, pair.b), table_id) as on_b:
        await on_b.next()
        for seat in ("EAST", "SOUTH", "WEST"):
            await host.add_bot(table_id, seat)  # A commits, and A's bots bid: A arms it
        turn = await on_b.until(lambda u: u["view"]["turn"] == "NORTH", timeout=10)
        assert turn["view"]["turnDeadline"] is not None
        pair.a.stop(kill=True)
        timed = await on_b.until(lambda u: u["event"] == "TURN_TIMED_OUT", timeout=15)
        assert timed["seat"] == "NORTH"
        bid = await on_b.next()
        assert (bid["event"], bid["seat"]) == ("BID_PLACED", "NORTH")


async def test_a_killed_processs_players_are_shown_disconnected_within_30_s(pair: Cluster) -> None:
    host = await FastApi(pair.b).sign_up()
    guest = await FastApi(pair.a).sign_up()
    table_id = str((await host.create_table(turnSeconds=300))["id"])
    await guest.join(table_id, "EAST")
    async with AsyncExitStack() as stack:
        hosting = await stack.enter_async_context(game_updates(host, table_id))
        await hosting.next()
        guesting = await stack.enter_async_context(game_updates(guest, table_id))
        await guesting.next()
        watching = await stack.enter_async_context(presence_updates(host, table_id))
        entries = {}
        deadline = time.monotonic() + 10
        while entries.get("EAST") is not True:
            # The first four entries, then changes, until EAST shows connected.
            entry = await watching.next(max(0.01, deadline - time.monotonic()))
            entries[entry["seat"]] = entry["connected"]
        killed_at = time.monotonic()
        pair.a.stop(kill=True)  # EAST's process dies without a word
        gone = await watching.until(
            lambda e: e["seat"] == "EAST" and e["connected"] is False, timeout=35
        )
        assert gone["playerId"] == guest.player_id
        assert time.monotonic() - killed_at <= 30
        await asyncio.sleep(0)


@pytest.fixture
def quick_replacement(tmp_path: Path) -> Iterator[Cluster]:
    """Processes A and B with a 6-second reconnect window (60 s in production)."""
    with two_processes(tmp_path, {"SPADES_RECONNECT_SECONDS": str(RECONNECT)}) as both:
        yield both


RECONNECT = 6.0


async def mid_game(cluster: Cluster) -> tuple[FastApi, FastApi, str]:
    """A game in play: NORTH's player talks to A, EAST's to B, bots in SOUTH and WEST."""
    north = await FastApi(cluster.a).sign_up()
    east = await FastApi(cluster.b).sign_up()
    table_id = str((await north.create_table(seed=5, turnSeconds=300))["id"])
    await east.join(table_id, "EAST")
    for seat in ("SOUTH", "WEST"):
        await north.add_bot(table_id, seat)
    return north, east, table_id


async def north_goes_away(cluster: Cluster, north: FastApi, east: FastApi, table_id: str) -> None:
    """NORTH holds a gameUpdates subscription on A, closes it, and is shown disconnected
    (A saw the disconnection and started the reconnect window)."""
    async with presence_updates(east, table_id) as watching:
        async with game_updates(north, table_id) as on_a:
            await on_a.next()
            await watching.until(lambda e: e["seat"] == "NORTH" and e["connected"], timeout=10)
        await watching.until(lambda e: e["seat"] == "NORTH" and not e["connected"], timeout=10)


async def replaced_once(cluster: Cluster, east: FastApi, table_id: str, north: FastApi) -> None:
    """EAST (on B) sees NORTH's seat taken by a bot once; the move log has it once."""
    async with game_updates(east, table_id) as on_b:
        await on_b.next()
        replaced = await on_b.until(lambda u: u["event"] == "PLAYER_REPLACED", timeout=30)
        assert replaced["seat"] == "NORTH"
        seat = seat_of(replaced["view"], "NORTH")
        assert seat["isBot"] is True and seat["awayPlayer"]["id"] == north.player_id
        await on_b.quiet(RECONNECT)  # every process's sweep has looked again by now
        assert on_b.events.count("PLAYER_REPLACED") == 1
    moves = await logged_moves(cluster.database_url, table_id)
    assert [m.get("away") for m in moves if m.get("away")] == [north.player_id]


async def test_a_disconnected_player_is_replaced_once_with_two_processes_watching(
    quick_replacement: Cluster,
) -> None:
    north, east, table_id = await mid_game(quick_replacement)
    await north_goes_away(quick_replacement, north, east, table_id)
    await replaced_once(quick_replacement, east, table_id, north)


async def test_a_disconnected_player_is_replaced_after_the_process_that_saw_it_is_killed(
    quick_replacement: Cluster,
) -> None:
    north, east, table_id = await mid_game(quick_replacement)
    await north_goes_away(quick_replacement, north, east, table_id)
    quick_replacement.a.stop(kill=True)  # the reconnect window A was timing dies with it
    await replaced_once(quick_replacement, east, table_id, north)
