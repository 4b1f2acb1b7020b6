"""Careers on two server processes (one PostgreSQL, one Redis): every move of a rated game,
the last one included, is sent to both processes at once, and the game's ratings and
statistics are applied exactly once."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest

from app.store.migrate import downgrade, upgrade
from tests.support.server import LiveServer
from tests.support.services import postgres_database, redis_url

from .harness import FastApi, choose_move, on, plain_url, send

BIDS = {"NORTH": 13, "SOUTH": 13, "EAST": None, "WEST": None}
BEFORE_CAREERS = "c4a7e0014cha7"


@contextlib.asynccontextmanager
async def connected(url: str) -> AsyncIterator[asyncpg.Connection]:
    """A plain asyncpg connection to the test database, closed on the way out."""
    connection = await asyncpg.connect(plain_url(url))
    try:
        yield connection
    finally:
        await connection.close()


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[LiveServer, LiveServer, str]]:
    """Two processes on a fresh PostgreSQL database and the shared Redis."""
    with postgres_database() as url:
        env = {"SPADES_BROKER_URL": redis_url()}
        a = LiveServer(tmp_path / "a.db", env=env, database_url=url)
        b = LiveServer(tmp_path / "b.db", env=env, database_url=url)
        a.start()
        try:
            b.start()
            try:
                yield a, b, url
            finally:
                b.stop()
        finally:
            a.stop()


async def race_a_game(a: LiveServer, b: LiveServer, rated: bool) -> tuple[str, dict[str, str]]:
    """Four humans play a game with every move sent to both processes at once; returns
    the table id and each seat's player id."""
    players = {seat: await FastApi(a).sign_up() for seat in ("NORTH", "EAST", "SOUTH", "WEST")}
    table = await players["NORTH"].create_table(seed=6, rated=rated)
    table_id = str(table["id"])
    for seat in ("EAST", "SOUTH", "WEST"):
        await players[seat].join(table_id, seat)
    for _ in range(400):
        view = await players["NORTH"].game(table_id)
        if view["phase"] == "GAME_OVER":
            break
        mover = players[view["turn"]]
        move = choose_move(await mover.game(table_id), BIDS[view["turn"]])
        results = await asyncio.gather(
            send(on(mover, a), table_id, move),
            send(on(mover, b), table_id, move),
            return_exceptions=True,
        )
        assert sum(isinstance(r, dict) for r in results) == 1, results
    else:
        raise AssertionError("the game did not end")
    return table_id, {seat: str(p.player_id) for seat, p in players.items()}


async def test_a_rated_game_raced_over_two_processes_is_rated_and_counted_once(
    pair: tuple[LiveServer, LiveServer, str],
) -> None:
    a, b, url = pair
    table_id, ids = await race_a_game(a, b, rated=True)
    async with connected(url) as connection:
        results = await connection.fetch("SELECT * FROM game_results WHERE table_id = $1", table_id)
        history = await connection.fetch(
            "SELECT * FROM rating_history WHERE table_id = $1", table_id
        )
        ratings = {
            r["player_id"]: r
            for r in await connection.fetch(
                "SELECT * FROM ratings WHERE player_id = ANY($1::text[])", list(ids.values())
            )
        }
        stats = await connection.fetch(
            "SELECT games, hands FROM player_stats WHERE player_id = ANY($1::text[])",
            list(ids.values()),
        )
        summaries = await connection.fetch(
            "SELECT player_id, won FROM game_summaries WHERE table_id = $1", table_id
        )
        winner = await connection.fetchval(
            "SELECT game_state::json->>'winner' FROM tables WHERE id = $1", table_id
        )
    assert len(results) == 1 and results[0]["rated"] is True
    assert sorted(h["player_id"] for h in history) == sorted(ids.values())  # once each
    assert all(r["games"] == 1 for r in ratings.values())
    assert [s["games"] for s in stats] == [1, 1, 1, 1]
    assert len({s["hands"] for s in stats}) == 1 and stats[0]["hands"] >= 2
    assert len(summaries) == 4
    won = {s["player_id"] for s in summaries if s["won"]}
    assert len(won) == 2
    for player_id, rating in ratings.items():
        assert (rating["value"] > 1500) is (player_id in won), (winner, rating)


async def test_the_migration_counts_games_finished_before_it_on_postgres(
    pair: tuple[LiveServer, LiveServer, str],
) -> None:
    a, b, url = pair
    table_id, ids = await race_a_game(a, b, rated=False)
    async with connected(url) as connection:
        live = await connection.fetch(
            "SELECT * FROM player_stats WHERE player_id = ANY($1::text[]) ORDER BY player_id",
            list(ids.values()),
        )
    a.stop()
    b.stop()
    # Back to the schema before careers (the finished game stays), then forward again:
    # the migration replays the game's move log into the same statistics.
    await asyncio.to_thread(downgrade, url, BEFORE_CAREERS)
    await asyncio.to_thread(upgrade, url)
    async with connected(url) as connection:
        again = await connection.fetch(
            "SELECT * FROM player_stats WHERE player_id = ANY($1::text[]) ORDER BY player_id",
            list(ids.values()),
        )
        summaries = await connection.fetchval(
            "SELECT count(*) FROM game_summaries WHERE table_id = $1 AND NOT rated", table_id
        )
        counter = await connection.fetchval("SELECT value FROM counters WHERE name = 'games'")
    assert [dict(r) for r in again] == [dict(r) for r in live]
    assert len(live) == 4 and all(r["games"] == 1 for r in live)
    assert summaries == 4 and counter == 1
