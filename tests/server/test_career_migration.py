"""The careers migration on an existing SQLite database: games that finished before it
are counted in the statistics (unrated), replayed from their move logs, exactly as they
would have been counted live."""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from typing import Any

import pytest

from app.store.migrate import downgrade, upgrade
from tests.server.careers import four_at_a_table, play_scripted_game, play_with_leaver
from tests.support.play import HumanTable, KeepAliveApi, kept_alive, sign_up_players
from tests.support.server import LiveServer

BEFORE_CAREERS = "c4a7e0014cha7"


def rows(server: LiveServer, query: str) -> list[tuple[Any, ...]]:
    connection = sqlite3.connect(server.database)
    try:
        return list(connection.execute(query).fetchall())
    finally:
        connection.close()


STATS = "SELECT * FROM player_stats ORDER BY player_id"
SUMMARIES = (
    "SELECT player_id, table_id, seat, won, abandoned, score_for, score_against, partner_id,"
    " opponents, rated FROM game_summaries ORDER BY seq, player_id"
)


async def test_the_migration_counts_finished_games_like_the_live_game_end(
    fresh_server: LiveServer,
) -> None:
    players = await sign_up_players(fresh_server, 4)
    async with kept_alive(*players):
        await play_scripted_game(players, seed=11)
        table_id, by_seat = await four_at_a_table(players, seed=12)
        await play_with_leaver(fresh_server, by_seat, table_id, leaver="EAST")
        unfinished = await players[0].create_table(seed=3)  # never started: not counted
    live_stats, live_summaries = rows(fresh_server, STATS), rows(fresh_server, SUMMARIES)
    fresh_server.stop()

    url = fresh_server.database_url
    await asyncio.to_thread(downgrade, url, BEFORE_CAREERS)
    assert not rows(fresh_server, "SELECT name FROM sqlite_master WHERE name = 'player_stats'")
    await asyncio.to_thread(upgrade, url)

    assert rows(fresh_server, STATS) == live_stats
    assert rows(fresh_server, SUMMARIES) == live_summaries
    assert len(live_stats) == 4 and {r[1] for r in live_stats} == {2}  # two games each
    abandoned = [r for r in live_summaries if r[4]]
    assert len(abandoned) == 1 and abandoned[0][1] == table_id
    assert rows(fresh_server, "SELECT value FROM counters") == [(2,)]
    assert not rows(
        fresh_server, f"SELECT * FROM game_results WHERE table_id = '{unfinished['id']}'"
    )
    assert not rows(fresh_server, "SELECT * FROM ratings")  # unrated

    fresh_server.start()  # and the server runs on the migrated database
    players = await sign_up_players(fresh_server, 4)
    async with kept_alive(*players):
        await play_scripted_game(players, seed=11)
    assert rows(fresh_server, "SELECT max(seq) FROM game_results") == [(3,)]


def _set_every_hand(view: dict[str, Any]) -> dict[str, Any]:
    """NORTH_SOUTH bid 13 and 13 (set by 130 a hand: the game ends after hand 2)."""
    if view["viewerSeat"] in ("NORTH", "SOUTH"):
        return {"kind": "TRICKS", "tricks": 13}
    return {"kind": "TRICKS", "tricks": 3}


def _last_card(view: dict[str, Any]) -> bool:
    tricks = sum(s["tricksWon"] for s in view["seats"])
    return view["handNumber"] == 2 and tricks == 12 and len(view["currentTrick"]) == 3


@pytest.mark.parametrize("delay", [0.0, 0.004])
async def test_a_sigkill_during_the_last_move_counts_the_game_once_or_with_the_move(
    fresh_server: LiveServer, delay: float
) -> None:
    players = await sign_up_players(fresh_server, 4)
    async with kept_alive(*players):
        table_id, by_seat = await four_at_a_table(players, seed=5)
        table = HumanTable(table_id, dict(by_seat), choose_bid=_set_every_hand)
        view = await table.play_until(_last_card)
        mover = by_seat[view["turn"]]
        own = await mover.game(table_id)
        final = asyncio.create_task(mover.play(table_id, own["legalPlays"][0]))
        await asyncio.sleep(delay)
        fresh_server.stop(kill=True)
        with contextlib.suppress(Exception):
            await final
    status = rows(fresh_server, f"SELECT status FROM tables WHERE id = '{table_id}'")[0][0]
    counted = rows(fresh_server, f"SELECT count(*) FROM game_results WHERE table_id = '{table_id}'")
    assert counted == [(1 if status == "FINISHED" else 0,)]  # the move and its count, or neither
    fresh_server.start()
    players = [KeepAliveApi(fresh_server, p.token) for p in players]
    async with kept_alive(*players):
        by_seat = dict(zip(("NORTH", "EAST", "SOUTH", "WEST"), players, strict=True))
        view = await by_seat["NORTH"].game(table_id)
        if view["phase"] != "GAME_OVER":
            own = await by_seat[view["turn"]].game(table_id)
            await by_seat[view["turn"]].play(table_id, own["legalPlays"][0])
    assert rows(
        fresh_server, f"SELECT count(*) FROM game_results WHERE table_id = '{table_id}'"
    ) == [(1,)]
    assert [r[0] for r in rows(fresh_server, "SELECT games FROM player_stats")] == [1, 1, 1, 1]
