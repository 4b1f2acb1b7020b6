"""Presence (docs/rules.md, "Live tables"): a seated human is connected while a gameUpdates
subscription of theirs is live; the others see a disconnection within 5 s, a reload
within 3 s not at all, a reconnection at once. Disconnected past the reconnect window
mid-game, a bot takes the seat; a waiting table nobody human is connected to closes.

The server here has a 4-second reconnect window and a 5-second idle time (settings)
instead of 60 s and 10 minutes; the presence timings are the production ones."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import pytest

from tests.support.live import (
    LIVE_GAME,
    RECLAIM,
    Updates,
    game_updates,
    instant,
    presence,
    presence_updates,
    refusal_code,
    seat_of,
)
from tests.support.scenarios import FastApi, signed_up
from tests.support.server import LiveServer

RECONNECT = 4.0
IDLE = 5.0
SEATS = ("NORTH", "EAST", "SOUTH", "WEST")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    folder = tmp_path_factory.mktemp("presence")
    env = {"SPADES_RECONNECT_SECONDS": str(RECONNECT), "SPADES_IDLE_TABLE_SECONDS": str(IDLE)}
    live = LiveServer(folder / "spades.db", env=env)
    live.start()
    yield live
    live.stop()


async def four_humans(server: LiveServer) -> tuple[str, dict[str, FastApi]]:
    apis = await signed_up(server, 4)
    players = dict(zip(SEATS, apis, strict=True))
    table_id = str((await players["NORTH"].create_table(seed=2, turnSeconds=300))["id"])
    for seat in SEATS[1:]:
        await players[seat].join(table_id, seat)
    return table_id, players


@asynccontextmanager
async def all_connected(
    table_id: str, players: dict[str, FastApi]
) -> AsyncIterator[dict[str, AsyncExitStack]]:
    """Every player holds a gameUpdates subscription (each closable on its own)."""
    stacks = {seat: AsyncExitStack() for seat in players}
    try:
        for seat, api in players.items():
            updates = await stacks[seat].enter_async_context(game_updates(api, table_id))
            await updates.next()
        await wait_for_presence(players["NORTH"], table_id, dict.fromkeys(SEATS, True))
        yield stacks
    finally:
        for stack in stacks.values():
            await stack.aclose()


@asynccontextmanager
async def watched_by(
    server: LiveServer, watcher: str
) -> AsyncIterator[tuple[str, dict[str, FastApi], dict[str, AsyncExitStack], Updates]]:
    """Four humans all connected to a table, `watcher` holding a presenceUpdates
    subscription whose first four entries (every seat connected) have been read."""
    table_id, players = await four_humans(server)
    async with (
        all_connected(table_id, players) as stacks,
        presence_updates(players[watcher], table_id) as watching,
    ):
        assert await initial(watching) == dict.fromkeys(SEATS, True)
        yield table_id, players, stacks, watching


async def wait_for_presence(
    api: FastApi, table_id: str, wanted: dict[str, bool], timeout: float = 10.0
) -> None:
    deadline = time.monotonic() + timeout
    while (now := await presence(api, table_id)) != wanted:
        assert time.monotonic() < deadline, now
        await asyncio.sleep(0.1)


async def initial(updates: Updates) -> dict[str, bool]:
    entries = [await updates.next() for _ in SEATS]
    assert [e["seat"] for e in entries] == list(SEATS)
    return {e["seat"]: e["connected"] for e in entries}


async def test_presence_shows_four_seats_bots_always_connected_empty_seats_never(
    server: LiveServer,
) -> None:
    (host,) = await signed_up(server, 1)
    table_id = (await host.create_table())["id"]
    await host.add_bot(table_id, "EAST")
    data = await host.call(
        "query($t: ID!) { presence(tableId: $t) { seat playerId connected changedAt } }",
        t=table_id,
    )
    rows = data["presence"]
    assert [r["seat"] for r in rows] == list(SEATS)
    assert rows[0]["playerId"] == host.player_id and rows[0]["connected"] is False
    assert rows[1] == {**rows[1], "playerId": "bot:east", "connected": True}
    assert rows[2]["playerId"] is None and rows[2]["connected"] is False
    assert all(instant(r["changedAt"]) <= time.time() + 1 for r in rows)
    async with game_updates(host, table_id) as updates:
        await updates.next()
        await wait_for_presence(
            host, table_id, {"NORTH": True, "EAST": True, "SOUTH": False, "WEST": False}
        )


async def test_presence_is_for_those_who_may_see_the_game(server: LiveServer) -> None:
    (host, stranger) = await signed_up(server, 2)
    private = (await host.create_table(visibility="PRIVATE"))["id"]
    assert (
        await refusal_code(stranger, "query($t: ID!) { presence(tableId: $t) { seat } }", t=private)
        == "NOT_FOUND"
    )
    closed = (await host.create_table(spectating=False))["id"]
    assert (
        await refusal_code(stranger, "query($t: ID!) { presence(tableId: $t) { seat } }", t=closed)
        == "FORBIDDEN"
    )


async def test_a_disconnection_is_seen_within_5_s_and_a_reconnection_at_once(
    server: LiveServer,
) -> None:
    async with watched_by(server, "NORTH") as (table_id, players, stacks, watching):
        closed_at = time.monotonic()
        await stacks["EAST"].aclose()  # EAST closes the tab
        gone = await watching.next(timeout=8)
        seen_after = time.monotonic() - closed_at
        assert (gone["seat"], gone["playerId"], gone["connected"]) == (
            "EAST",
            players["EAST"].player_id,
            False,
        )
        assert 3.0 <= seen_after <= 5.0, seen_after
        async with game_updates(players["EAST"], table_id) as back:
            await back.next()
            reconnected_at = time.monotonic()
            again = await watching.next(timeout=5)
            assert (again["seat"], again["connected"]) == ("EAST", True)
            assert time.monotonic() - reconnected_at < 2.0
            assert instant(again["changedAt"]) >= instant(gone["changedAt"])


async def test_a_reload_within_3_s_shows_no_change(server: LiveServer) -> None:
    async with watched_by(server, "SOUTH") as (table_id, players, stacks, watching):
        await stacks["WEST"].aclose()
        await asyncio.sleep(2.0)  # a slow page reload
        async with game_updates(players["WEST"], table_id) as again:
            await again.next()
            assert await watching.quiet(5.0) == []
            assert (await presence(players["SOUTH"], table_id))["WEST"] is True


async def test_a_player_disconnected_past_the_window_is_replaced_and_may_reclaim(
    server: LiveServer,
) -> None:
    table_id, players = await four_humans(server)
    async with (
        all_connected(table_id, players) as stacks,
        game_updates(players["NORTH"], table_id) as updates,
    ):
        start = (await updates.next())["view"]["version"]
        await stacks["SOUTH"].aclose()
        replaced = await updates.until(
            lambda u: u["event"] == "PLAYER_REPLACED", timeout=3.5 + RECONNECT + 5
        )
        assert replaced["seat"] == "SOUTH"
        assert replaced["view"]["version"] == start + 1  # nothing else changed meanwhile
        south = seat_of(replaced["view"], "SOUTH")
        assert south["isBot"] is True
        assert south["awayPlayer"]["id"] == players["SOUTH"].player_id
        # The bot in the seat counts as connected.
        assert (await presence(players["NORTH"], table_id))["SOUTH"] is True
        await players["SOUTH"].call(RECLAIM, t=table_id)
        back = await updates.until(lambda u: u["event"] == "SEAT_RECLAIMED")
        assert seat_of(back["view"], "SOUTH")["playerId"] == players["SOUTH"].player_id


async def test_a_waiting_table_without_a_connected_human_closes(server: LiveServer) -> None:
    (host, spectator) = await signed_up(server, 2)
    idle = (await host.create_table())["id"]
    kept = (await host.create_table())["id"]
    async with (
        game_updates(host, kept) as hosting,
        game_updates(spectator, idle) as watching,
    ):
        await hosting.next()
        await watching.next()
        closed = await watching.until(lambda u: u["event"] == "TABLE_CLOSED", timeout=IDLE + 8)
        assert closed["view"]["version"] == 1
        # The table whose host is connected stays open.
        status = await host.call("query($t: ID!) { table(id: $t) { status } }", t=kept)
        assert status["table"]["status"] == "WAITING"


async def test_a_spectators_watching_is_no_seats_connection(server: LiveServer) -> None:
    (host, watcher) = await signed_up(server, 2)
    table_id = (await host.create_table())["id"]
    before_watching = time.time()
    async with game_updates(watcher, table_id) as watching:
        await watching.next()
        await asyncio.sleep(0.5)
    await asyncio.sleep(3.5 + 1.0)  # past the grace period: the watching has ended
    await watcher.join(table_id, "EAST")
    rows = (
        await host.call(
            "query($t: ID!) { presence(tableId: $t) { seat playerId connected changedAt } }",
            t=table_id,
        )
    )["presence"]
    east = rows[1]
    assert (east["playerId"], east["connected"]) == (watcher.player_id, False)
    # Never connected as a player: nothing of the watching before they sat shows.
    assert instant(east["changedAt"]) <= before_watching


async def test_a_spectator_who_sits_down_while_watching_is_connected(server: LiveServer) -> None:
    (host, watcher) = await signed_up(server, 2)
    table_id = (await host.create_table())["id"]
    async with game_updates(watcher, table_id) as watching:
        await watching.next()
        assert (await presence(host, table_id))["EAST"] is False
        await watcher.join(table_id, "EAST")
        await watching.until(lambda u: u["event"] == "SEAT_TAKEN")
        await wait_for_presence(
            host, table_id, {"NORTH": False, "EAST": True, "SOUTH": False, "WEST": False}
        )


@pytest.mark.parametrize("kill", [False, True], ids=["stopped", "killed"])
async def test_after_a_restart_without_redis_a_player_who_does_not_come_back_is_replaced(
    tmp_path: Path, kill: bool
) -> None:
    # Presence lived in the old process: the new one counts every seated human of a game
    # in progress as disconnected since it started, so the window runs from the restart.
    live = LiveServer(tmp_path / "spades.db", env={"SPADES_RECONNECT_SECONDS": str(RECONNECT)})
    live.start()
    try:
        north, south = await signed_up(live, 2)
        table_id = str((await north.create_table(seed=2))["id"])
        await south.join(table_id, "SOUTH")
        for seat in ("EAST", "WEST"):
            await north.add_bot(table_id, seat)
        async with game_updates(north, table_id) as before, game_updates(south, table_id) as s:
            await before.next()
            await s.next()
            connected = {"NORTH": True, "EAST": True, "SOUTH": True, "WEST": True}
            await wait_for_presence(north, table_id, connected)
            await asyncio.to_thread(live.restart, kill)
        restarted = time.monotonic()
        # NORTH comes back at once; SOUTH never does.
        async with game_updates(north, table_id) as back:
            snapshot = await back.next()
            assert snapshot["event"] == "SNAPSHOT"
            version = snapshot["view"]["version"]
            replaced = await back.until(
                lambda u: u["event"] == "PLAYER_REPLACED", timeout=RECONNECT + 10
            )
            assert time.monotonic() - restarted >= RECONNECT - 1.0  # the window, from the start
            assert replaced["seat"] == "SOUTH"
            assert replaced["view"]["version"] == version + 1  # nothing else changed
            assert seat_of(replaced["view"], "SOUTH")["awayPlayer"]["id"] == south.player_id
            # Past the window NORTH, back in time, still sits there and is connected (the
            # bot in SOUTH's seat plays on meanwhile).
            later = await back.quiet(2.0)
            assert "PLAYER_REPLACED" not in [u["event"] for u in later], later
            view = (await north.call(LIVE_GAME, t=table_id))["game"]
            assert seat_of(view, "NORTH")["playerId"] == north.player_id
            assert seat_of(view, "NORTH")["awayPlayer"] is None
            assert (await presence(north, table_id))["NORTH"] is True
        # SOUTH may still take the seat back, as after any replacement.
        await south.call(RECLAIM, t=table_id)
        view = (await south.call(LIVE_GAME, t=table_id))["game"]
        assert seat_of(view, "SOUTH")["playerId"] == south.player_id
    finally:
        live.stop()
