"""Quick play's waits (docs/rules.md, Quick play) on one real server (SQLite): bots after
SPADES_QUICKPLAY_BOT_SECONDS (2 s here) for unrated tickets only, a ticket kept only
while its owner watches it, an away player free to search, and tickets that outlive a
restart."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.support.live import game_updates, hosting_bots, instant
from tests.support.quickplay import (
    cancel_all,
    humans,
    latest,
    refusal,
    start,
    statuses,
    until_status,
    updates,
)
from tests.support.server import LiveServer
from tests.support.social import Social

BOT_SECONDS = 2.0
WAITS = {
    "SPADES_QUICKPLAY_BOT_SECONDS": str(BOT_SECONDS),
    "SPADES_QUICKPLAY_WAVE_SECONDS": "0.3",
    "SPADES_RECONNECT_SECONDS": "1",
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server for the module: bots after 2 s, a 1 s reconnect window."""
    live = LiveServer(tmp_path_factory.mktemp("quickplay_waits") / "spades.db", env=WAITS)
    live.start()
    yield live
    live.stop()


@pytest.fixture
async def players(server: LiveServer) -> AsyncIterator[list[Social]]:
    """Four signed-up players; whatever they still search is cancelled afterwards."""
    signed = list(await asyncio.gather(*(Social.signed_up(server) for _ in range(4))))
    yield signed
    await cancel_all(signed)


async def test_one_unrated_player_alone_gets_three_standard_bots_after_the_bot_time(
    players: list[Social],
) -> None:
    alone = players[0]
    async with updates(alone) as stream:
        ticket = await start(alone)
        assert instant(ticket["botsAt"]) - instant(ticket["startedAt"]) == pytest.approx(
            BOT_SECONDS, abs=0.01
        )
        assert (await stream.next())["status"] == "SEARCHING"
        matched = await stream.next(timeout=10)
    assert matched["status"] == "MATCHED"
    assert time.time() >= instant(ticket["botsAt"])
    table = matched["table"]
    assert humans(table) == [alone.player_id]
    assert table["seats"][0]["playerId"] == alone.player_id  # NORTH, and so the host
    assert table["host"]["id"] == alone.player_id
    bots = [s for s in table["seats"] if s["isBot"]]
    assert [s["botLevel"] for s in bots] == ["STANDARD"] * 3
    assert table["rated"] is False and table["status"] == "PLAYING"


async def test_two_unrated_players_share_a_table_with_two_bots(players: list[Social]) -> None:
    pair = players[:2]
    async with updates(pair[0]), updates(pair[1]):
        for player in pair:
            await start(player)
        tables = [await until_status(p, "MATCHED", timeout=10) for p in pair]
    table = tables[0]["table"]
    assert tables[1]["table"]["id"] == table["id"]
    assert sorted(humans(table)) == sorted(str(p.player_id) for p in pair)
    assert sum(1 for s in table["seats"] if s["isBot"]) == 2


async def test_a_rated_ticket_never_gets_bots(players: list[Social]) -> None:
    async with updates(players[0]) as stream:
        ticket = await start(players[0], rated=True)
        assert ticket["botsAt"] is None
        await stream.next()
        assert await stream.quiet(BOT_SECONDS + 1.5) == []
    assert await statuses(players[:1]) == ["SEARCHING"]


async def test_a_ticket_is_kept_only_while_its_owner_watches_it(players: list[Social]) -> None:
    unwatched, left, watching = players[:3]
    began = time.monotonic()
    async with updates(watching):
        async with updates(left):
            # Rated: no bots come for them; each waits alone.
            for player in (unwatched, left, watching):
                await start(player, rated=True)
            await asyncio.sleep(3.0)
        stopped = time.monotonic()  # `left` stopped watching here

        async def at(seconds: float) -> None:
            await asyncio.sleep(max(0.0, began + seconds - time.monotonic()))

        await at(8.5)  # nobody watched `unwatched` since its start: kept for 10 s
        assert await statuses([unwatched, left, watching]) == ["SEARCHING"] * 3
        await at(11.5)
        assert await statuses([unwatched, left, watching]) == [
            "EXPIRED",
            "SEARCHING",
            "SEARCHING",
        ]
        await asyncio.sleep(max(0.0, stopped + 11.5 - time.monotonic()))
        assert await statuses([left, watching]) == ["EXPIRED", "SEARCHING"]
    expired = await latest(unwatched)
    assert expired is not None and expired["botsAt"] is None


async def test_an_away_player_does_not_hold_the_seat(players: list[Social]) -> None:
    player = players[0]
    async with hosting_bots(player) as (table_id, stream):
        await stream.until(lambda u: u["event"] == "GAME_STARTED")
        assert await player.error("mutation { startQuickPlay { id } }") == "ALREADY_SEATED"
    # Disconnected past the grace (3.5 s) and the reconnect window (1 s): a bot plays for
    # them, and they are the seat's away player.
    deadline = time.monotonic() + 15
    while await refusal(player, rated=True) == "ALREADY_SEATED":
        assert time.monotonic() < deadline, "the player never became away"
        await asyncio.sleep(0.5)
    async with game_updates(player, table_id) as watching:
        view = (await watching.next())["view"]
    assert player.player_id not in [s["playerId"] for s in view["seats"]]
    assert await statuses([player]) == ["SEARCHING"]


async def test_a_ticket_outlives_a_restart_and_is_matched_after_it(
    server: LiveServer, players: list[Social]
) -> None:
    first = await start(players[0], rated=True)
    server.stop()
    server.start()
    async with updates(players[0]) as stream:
        assert await stream.next() == first  # the same ticket, still searching
        for player in players[1:]:
            await start(player, rated=True)
        matched = await stream.next(timeout=10)
    assert matched["id"] == first["id"] and matched["status"] == "MATCHED"
    assert set(humans(matched["table"])) == {p.player_id for p in players}
