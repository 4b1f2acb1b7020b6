"""gameUpdates with `since`: a client that reconnects gets exactly the updates it missed, in
order and as a live subscriber saw them, then the live ones; with nothing missed, nothing
replayed; with a version that cannot be replayed, a SNAPSHOT first."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.client import Api, next_update
from tests.support.scenarios import GAME_UPDATES, SEATS, FastApi, SeatedTable, seat_four_humans
from tests.support.server import LiveServer

Queue = asyncio.Queue[Any]


async def update(queue: Queue) -> dict[str, Any]:
    """The next gameUpdates payload."""
    return dict((await next_update(queue))["gameUpdates"])


async def updates_until(queue: Queue, version: int) -> list[dict[str, Any]]:
    """Updates up to and including `version`."""
    received = [await update(queue)]
    while received[-1]["view"]["version"] < version:
        received.append(await update(queue))
    assert received[-1]["view"]["version"] == version
    return received


async def assert_quiet(queue: Queue, seconds: float = 0.3) -> None:
    """No update arrives for a while."""
    await asyncio.sleep(seconds)
    assert queue.empty(), queue.get_nowait()


def versions(updates: list[dict[str, Any]]) -> list[int]:
    """The versions of some updates."""
    return [u["view"]["version"] for u in updates]


@pytest.fixture
async def table(server: LiveServer) -> SeatedTable:
    """Four humans, the game started (version 4: three seats taken, then the deal)."""
    table = await seat_four_humans(server, seed=31)
    assert (await table.view())["version"] == 4
    return table


@pytest.mark.parametrize(
    ("viewer", "cards"),
    [("NORTH", 52), ("spectator", 9)],
    ids=["seat-whole-hand", "spectator-two-tricks"],
)
async def test_resubscribing_with_since_replays_exactly_what_was_missed_then_goes_live(
    server: LiveServer, table: SeatedTable, viewer: str, cards: int
) -> None:
    tid = table.table_id
    watcher: Api = table.players[viewer] if viewer in SEATS else await FastApi(server).sign_up()
    async with watcher.subscribe(GAME_UPDATES, t=tid, s=None) as live:
        assert (await update(live))["event"] == "SNAPSHOT"
        async with watcher.subscribe(GAME_UPDATES, t=tid, s=None) as first:
            assert (await update(first))["event"] == "SNAPSHOT"
            await table.players["EAST"].bid(tid, "TRICKS", 4)
            await table.players["SOUTH"].bid(tid, "NIL")
            seen = await updates_until(first, 6)
            assert versions(seen) == [5, 6]
        # Disconnected: the rest of the bidding and some play (the whole hand 1 and a bid of
        # hand 2, where EAST deals and SOUTH bids first).
        await table.players["WEST"].bid(tid, "TRICKS", 3)
        await table.players["NORTH"].bid(tid, "TRICKS", 5)
        await table.play_legal(cards)
        if cards == 52:
            await table.players["SOUTH"].bid(tid, "TRICKS", 2)
        current = (await table.view())["version"]
        missed = await updates_until(live, current)
        assert versions(missed) == list(range(5, current + 1))
        events = {u["event"] for u in missed}
        assert {"CARD_PLAYED", "TRICK_WON"} <= events
        if cards == 52:
            assert {"HAND_SCORED", "HAND_DEALT"} <= events

        async with watcher.subscribe(GAME_UPDATES, t=tid, s=6) as resumed:
            replayed = await updates_until(resumed, current)
            assert versions(replayed) == list(range(7, current + 1))
            assert replayed == missed[2:]  # same events, seats and views as seen live
            await assert_quiet(resumed)
            # Then live, like everyone else.
            player = await table.on_turn()
            if cards == 52:
                await player.bid(tid, "TRICKS", 3)
            else:
                await player.play(tid, (await player.game(tid))["legalPlays"][0])
            assert await update(resumed) == await update(live)
            await assert_quiet(resumed, 0.1)


async def test_since_the_current_version_replays_nothing_then_goes_live(
    table: SeatedTable,
) -> None:
    tid = table.table_id
    north = table.host
    await table.players["EAST"].bid(tid, "TRICKS", 2)
    current = (await table.view())["version"]
    async with north.subscribe(GAME_UPDATES, t=tid, s=current) as resumed:
        await assert_quiet(resumed)
        view = await table.players["SOUTH"].bid(tid, "TRICKS", 3)
        got = await update(resumed)
        assert (got["event"], got["seat"]) == ("BID_PLACED", "SOUTH")
        assert got["view"]["version"] == current + 1 == view["version"]
        assert got["view"]["viewerSeat"] == "NORTH"


@pytest.mark.parametrize("since", [-1, 0, 1, 2, 1000, 2**31 - 1])
async def test_a_since_that_cannot_be_replayed_gives_a_snapshot_first(
    table: SeatedTable, since: int
) -> None:
    """Before the game started (seats are not replayed), negative, or in the future."""
    tid = table.table_id
    await table.players["EAST"].bid(tid, "TRICKS", 2)
    current = (await table.view())["version"]
    async with table.host.subscribe(GAME_UPDATES, t=tid, s=since) as resumed:
        first = await update(resumed)
        assert first["event"] == "SNAPSHOT"
        assert first["view"] == await table.host.game(tid)
        assert first["view"]["version"] == current
        await table.players["SOUTH"].bid(tid, "TRICKS", 3)
        following = await update(resumed)
        assert (following["event"], following["view"]["version"]) == ("BID_PLACED", current + 1)


async def test_since_the_version_before_the_deal_gives_the_deal_or_a_snapshot(
    server: LiveServer,
) -> None:
    """Version 3 is the last one before GAME_STARTED: either replayable or a SNAPSHOT."""
    players = [await FastApi(server).sign_up() for _ in range(4)]
    host = players[0]
    table_id = (await host.create_table(seed=31))["id"]
    async with host.subscribe(GAME_UPDATES, t=table_id, s=None) as live:
        assert (await update(live))["event"] == "SNAPSHOT"
        for seat, player in zip(SEATS[1:], players[1:], strict=True):
            await player.join(table_id, seat)
        await players[1].bid(table_id, "TRICKS", 1)
        seen = await updates_until(live, 5)
    assert [u["event"] for u in seen] == ["SEAT_TAKEN"] * 3 + ["GAME_STARTED", "BID_PLACED"]
    async with host.subscribe(GAME_UPDATES, t=table_id, s=3) as resumed:
        first = await update(resumed)
        if first["event"] == "SNAPSHOT":
            assert first["view"]["version"] == 5
        else:
            assert [first, await update(resumed)] == seen[3:]


async def test_since_on_a_table_still_waiting_gives_a_snapshot(server: LiveServer) -> None:
    host, guest = FastApi(server), FastApi(server)
    await host.sign_up()
    await guest.sign_up()
    table_id = (await host.create_table())["id"]
    await guest.join(table_id, "EAST")
    async with host.subscribe(GAME_UPDATES, t=table_id, s=0) as resumed:
        first = await update(resumed)
        assert (first["event"], first["view"]["version"]) == ("SNAPSHOT", 1)
        assert first["view"]["phase"] == "WAITING"
