"""A game's end through the one-trip move writers (docs/rules.md "Ratings and career
statistics"): the final move and its careers (claim, statistics, summaries, ratings and
their history) in one transaction, on a real SQLite file and a real PostgreSQL
database: once, whichever of two processes makes the move, with ratings read again
when they changed meanwhile, and all or nothing through a SIGKILL."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from app.broker.memory import MemoryBroker
from app.rules.career import CareerLine, career_lines
from app.rules.errors import RuleError
from app.rules.moves import Move
from app.rules.rating import Skill, rate_match
from app.services.play.moves import apply_move
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger, _row_values
from app.services.tables.snapshot import TableSnapshot, TableStatus
from app.store import table_rows as repo
from app.store.career import FinishedGame, GameEnd, stats_values, summary_values
from app.store.db import Database

from .databases import migrated_with_players
from .game_ends import careers_ledger, finish, round_trips, stored, table_at_last_move

PLAYERS = [f"p{i}" for i in range(12)]
FIRST = PLAYERS[:4]
SECOND = ["p3", "p4", "p5", "p6"]  # p3 plays both
WARM_UP = PLAYERS[8:]  # nobody else's game: it readies a connection's statements
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
async def url(empty_url: str) -> str:
    return await migrated_with_players(empty_url, PLAYERS)


# The ratings are read in a trip of their own on PostgreSQL only: these tests take
# only its database (the parameter of empty_url), instead of skipping SQLite's.
on_postgres_only = pytest.mark.parametrize("empty_url", ["postgres"], indirect=True)


@pytest.fixture
def postgres_only(url: str) -> str:
    assert url.startswith("postgresql")
    return url


@pytest.fixture
async def db(url: str) -> AsyncIterator[Database]:
    database = Database(url)
    yield database
    await database.dispose()


@pytest.fixture(params=["move writer", "session"])
async def either_path(request: pytest.FixtureRequest, url: str) -> AsyncIterator[Database]:
    """The database through the move writer, or through the session path (the ORM
    transaction a finishing change takes when it also changes seats)."""
    database = Database(url)
    if request.param == "session":
        database.move_writer = None
    yield database
    await database.dispose()


def by_player(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["player_id"]: row for row in rows}


def lines_of(table: TableSnapshot) -> list[CareerLine]:
    assert table.game is not None
    return career_lines(table.game)


def expected_ratings(lines: list[CareerLine]) -> dict[str, Skill]:
    """Four new players: the winners beat the losers once."""
    winners = [line.player_id for line in lines if line.won]
    losers = [line.player_id for line in lines if not line.won]
    won, lost = rate_match([Skill()] * len(winners), [Skill()] * len(losers))
    return dict(zip(winners + losers, won + lost, strict=True))


async def test_an_unrated_game_end_writes_its_careers_with_the_final_move(
    either_path: Database,
) -> None:
    db = either_path
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=False)
    after = await finish(careers_ledger(db), "t1", move)
    assert after.status is TableStatus.FINISHED and after.game is not None
    rows = await stored(db)
    (result,) = rows["results"]
    assert result["table_id"] == "t1" and result["rated"] is False
    game = FinishedGame("t1", result["seq"], result["finished_at"], rated=False)
    stats, summaries = by_player(rows["stats"]), by_player(rows["summaries"])
    lines = lines_of(after)
    assert sorted(stats) == sorted(summaries) == sorted(FIRST)
    for line in lines:
        assert stats[line.player_id] == {"player_id": line.player_id, **stats_values(line)}
        assert summaries[line.player_id] == summary_values(game, line, None, None)
        # What the numbers must be, whatever computed them: one game, every hand held.
        won = line.seat.team is after.game.winner
        assert stats[line.player_id]["games"] == 1
        assert stats[line.player_id]["hands"] == len(after.game.finished)
        assert stats[line.player_id]["wins"] == int(won)
    assert rows["ratings"] == [] and rows["history"] == []
    fresh = await Ledger(db, MemoryBroker()).get("t1")  # read back
    assert fresh is not None and fresh.version == after.version


async def test_a_rated_game_end_rates_its_players_once_in_the_final_move(
    url: str, either_path: Database
) -> None:
    db = either_path
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    other_db = Database(url)  # another process, its cache one move behind
    other = careers_ledger(other_db)
    try:
        assert await other.get("t1") is not None
        after = await finish(careers_ledger(db), "t1", move)
        with pytest.raises(RuleError):  # its move is decided again: the game is over
            await finish(other, "t1", move)
    finally:
        await other.close()
        await other_db.dispose()
    rows = await stored(db)
    assert sorted(by_player(rows["ratings"])) == sorted(by_player(rows["history"])) == FIRST
    assert_rated_once(rows, after)


def assert_rated_once(rows: dict[str, list[dict[str, Any]]], after: TableSnapshot) -> None:
    """The table's game, the first of its four players, is in their careers once: its
    result, their new ratings, history, summaries and statistics, field by field."""
    (result,) = [r for r in rows["results"] if r["table_id"] == after.id]
    assert result["rated"] is True
    seq = result["seq"]
    lines = lines_of(after)
    expected = expected_ratings(lines)
    ratings, history = by_player(rows["ratings"]), by_player(rows["history"])
    summaries, stats = by_player(rows["summaries"]), by_player(rows["stats"])
    game = FinishedGame(after.id, seq, result["finished_at"], rated=True)
    for line in lines:
        player, new = line.player_id, expected[line.player_id]
        assert ratings[player] == {
            "player_id": player,
            "username_key": player,
            "mu": new.mu,
            "sigma": new.sigma,
            "value": new.value,
            "deviation": new.deviation,
            "games": 1,
            "seq": seq,
            "listed": False,
            "board_value": -new.value,
            "board_games": -1,
        }
        assert history[player] == {
            "player_id": player,
            "seq": seq,
            "table_id": after.id,
            "mu_before": Skill().mu,
            "sigma_before": Skill().sigma,
            "value_before": 1500,
            "deviation_before": 350,
            "mu_after": new.mu,
            "sigma_after": new.sigma,
            "value_after": new.value,
            "deviation_after": new.deviation,
            "games_after": 1,
        }
        assert summaries[player] == summary_values(game, line, 1500, new.value)
        assert stats[player] == {"player_id": player, **stats_values(line)}
        assert (new.value > 1500) is line.won  # the winners went up, the losers down


async def test_a_game_end_whose_table_moved_on_writes_no_careers(db: Database) -> None:
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    ledger = careers_ledger(db)
    table = await ledger.get("t1")
    await ledger.settle()  # the ratings read ahead (PostgreSQL)
    assert table is not None and ledger.on_finish is not None
    change = apply_move(table, move)
    after = change.steps[-1].table
    end = await ledger.on_finish(after, change)
    assert end is not None and end.rated
    writer = db.move_writer
    assert writer is not None
    rows = repo.move_rows("t1", change.log)
    assert await writer.commit("t1", 99, _row_values(after), rows, end) is False
    careers = await stored(db)
    assert careers["results"] == careers["stats"] == careers["summaries"] == []
    assert careers["history"] == []
    # PostgreSQL read the ratings ahead, creating new players' rows at the default;
    # they read as no rating at all.
    assert all(r["games"] == 0 and r["value"] == 1500 for r in careers["ratings"])


def shared_player_history(rows: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    return [h for h in rows["history"] if h["player_id"] == "p3"]


def assert_chained(history: list[dict[str, Any]]) -> None:
    """p3's second game started from the rating the first one left."""
    first, second = history
    assert first["seq"] < second["seq"]
    for name in ("mu", "sigma", "value", "deviation"):
        assert second[f"{name}_before"] == first[f"{name}_after"], name
    assert (first["games_after"], second["games_after"]) == (1, 2)


async def test_two_rated_games_sharing_a_player_ending_at_once_both_count(url: str) -> None:
    dbs = [Database(url), Database(url)]  # two processes
    try:
        moves = [
            await table_at_last_move(dbs[0], "t1", FIRST, seed=3, rated=True),
            await table_at_last_move(dbs[0], "t2", SECOND, seed=4, rated=True),
        ]
        ledgers = [careers_ledger(d) for d in dbs]
        await asyncio.gather(finish(ledgers[0], "t1", moves[0]), finish(ledgers[1], "t2", moves[1]))
        rows = await stored(dbs[0])
    finally:
        for d in dbs:
            await d.dispose()
    assert len(rows["results"]) == 2 and len(rows["history"]) == 8
    assert_chained(shared_player_history(rows))
    assert by_player(rows["ratings"])["p3"]["games"] == 2
    assert by_player(rows["stats"])["p3"]["games"] == 2


def _finish_elsewhere(url: str, table_id: str, move: Move) -> None:
    """Another process ends a game (its own thread, loop and connections)."""

    async def run() -> None:
        db = Database(url)
        try:
            await finish(careers_ledger(db), table_id, move)
        finally:
            await db.dispose()

    asyncio.run(run())


def rating_with(end: GameEnd, before_rating: Callable[[int], None]) -> GameEnd:
    """`end` calling `before_rating(n)` at its n-th rating (1, 2, ...), then rating."""
    calls = 0
    rate = end.rate
    assert rate is not None

    def counted(before: Mapping[str, Skill]) -> dict[str, Skill]:
        nonlocal calls
        calls += 1
        before_rating(calls)
        return rate(before)

    return dataclasses.replace(end, rate=counted)


@on_postgres_only
async def test_ratings_that_changed_since_they_were_read_are_read_again(
    postgres_only: str, db: Database
) -> None:
    url = postgres_only
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    other_move = await table_at_last_move(db, "t2", SECOND, seed=4, rated=True)
    ledger = careers_ledger(db)
    describe = ledger.on_finish
    assert describe is not None
    ratings_read: list[int] = []

    def between_read_and_write(n: int) -> None:
        ratings_read.append(n)
        if n == 1:  # p3's other game ends right now, in another process
            other = threading.Thread(target=_finish_elsewhere, args=(url, "t2", other_move))
            other.start()
            other.join()

    async def meanwhile(table: TableSnapshot, change: Change) -> GameEnd | None:
        end = await describe(table, change)
        assert end is not None
        return rating_with(end, between_read_and_write)

    ledger.on_finish = meanwhile
    await finish(ledger, "t1", move)
    assert ratings_read == [1, 2]  # the first write found p3's rating moved on
    rows = await stored(db)
    history = shared_player_history(rows)
    assert [h["table_id"] for h in history] == ["t2", "t1"]
    assert_chained(history)
    assert len(rows["results"]) == 2 and len(rows["history"]) == 8


async def warmed_up(db: Database) -> Ledger:
    """A careers ledger whose move writer ended a rated game already: its connection
    has the statements of a rated game's end ready (asyncpg prepares a statement in a
    trip of its own the first time a connection runs it)."""
    ledger = careers_ledger(db)
    move = await table_at_last_move(db, "t0", WARM_UP, seed=5, rated=True)
    assert await ledger.get("t0") is not None
    await ledger.settle()
    await finish(ledger, "t0", move)
    return ledger


@on_postgres_only
async def test_a_rated_game_end_with_its_ratings_read_ahead_is_one_trip(
    postgres_only: str, db: Database
) -> None:
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    ledger = await warmed_up(db)
    assert await ledger.get("t1") is not None  # the table loaded: its ratings read ahead
    await ledger.settle()
    with round_trips() as trips:
        after = await finish(ledger, "t1", move)
    assert trips == [1]  # the final move's one statement: no read of the ratings
    assert_rated_once(await stored(db), after)


@on_postgres_only
async def test_ratings_read_ahead_that_changed_since_are_read_again(
    postgres_only: str, db: Database
) -> None:
    url = postgres_only
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    other_move = await table_at_last_move(db, "t2", SECOND, seed=4, rated=True)
    ledger = await warmed_up(db)
    assert await ledger.get("t1") is not None
    await ledger.settle()
    # p3's other game ends in another process: the rating read ahead is stale.
    await asyncio.to_thread(_finish_elsewhere, url, "t2", other_move)
    describe = ledger.on_finish
    assert describe is not None
    ratings_computed: list[int] = []

    async def counted(table: TableSnapshot, change: Change) -> GameEnd | None:
        end = await describe(table, change)
        assert end is not None
        return rating_with(end, ratings_computed.append)

    ledger.on_finish = counted
    with round_trips() as trips:
        await finish(ledger, "t1", move)
    # The write refused (p3's rating moved on), the ratings read, the write again.
    assert trips == [3] and ratings_computed == [1, 2]
    rows = await stored(db)
    history = shared_player_history(rows)
    assert [h["table_id"] for h in history] == ["t2", "t1"]
    assert_chained(history)
    assert len(rows["results"]) == 3 and len(rows["history"]) == 12


def start_finisher(url: str, hang: Path | None = None) -> subprocess.Popen[bytes]:
    """A process that makes the last move of table t1 (see `game_ends`)."""
    command = [sys.executable, "-m", "tests.store.game_ends", url, "t1", "3", *FIRST]
    if hang is not None:
        command += ["--hang", str(hang)]
    return subprocess.Popen(command, cwd=ROOT)


def wait_for(condition: Callable[[], bool], process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while not condition():
        assert process.poll() is None, "the finisher exited"
        assert time.monotonic() < deadline, "the finisher never got there"
        time.sleep(0.05)


def kill(process: subprocess.Popen[bytes]) -> None:
    os.kill(process.pid, signal.SIGKILL)
    process.wait()


async def assert_counted_once(db: Database, move: Move) -> None:
    """The game's end is in the careers once, with its last move; making that move
    again (it is if it was lost) does not count it twice."""
    table = await Ledger(db, MemoryBroker()).get("t1")
    assert table is not None
    if table.status is not TableStatus.FINISHED:
        assert (await stored(db))["results"] == []
        await finish(careers_ledger(db), "t1", move)
    else:
        with pytest.raises(RuleError):
            await finish(careers_ledger(db), "t1", move)
    rows = await stored(db)
    assert len(rows["results"]) == 1 and len(rows["summaries"]) == 4
    assert [r["games"] for r in rows["ratings"]] == [1, 1, 1, 1]
    assert [s["games"] for s in rows["stats"]] == [1, 1, 1, 1]
    assert sorted(h["player_id"] for h in rows["history"]) == sorted(FIRST)


async def test_a_process_killed_in_its_final_write_leaves_no_trace_and_the_game_counts_once(
    url: str, db: Database, tmp_path: Path
) -> None:
    # It is killed once the ratings are read, before the new ones are written: on SQLite
    # inside the open transaction (table row, move log and claim written, uncommitted).
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    marker = tmp_path / "ratings-read"
    process = start_finisher(url, hang=marker)
    try:
        wait_for(marker.exists, process)
    finally:
        kill(process)
    rows = await stored(db)
    assert rows["results"] == rows["stats"] == rows["summaries"] == rows["history"] == []
    table = await Ledger(db, MemoryBroker()).get("t1")
    assert table is not None and table.status is TableStatus.PLAYING and table.version == 100
    await assert_counted_once(db, move)


@on_postgres_only
async def test_a_process_killed_while_postgres_runs_its_final_write_applies_all_or_nothing(
    postgres_only: str, db: Database
) -> None:
    # The games counter is held here, so the finisher's statement waits inside
    # PostgreSQL, its ratings and table row already locked: then it is killed.
    url = postgres_only
    move = await table_at_last_move(db, "t1", FIRST, seed=3, rated=True)
    plain = url.replace("postgresql+asyncpg://", "postgresql://")
    holder, watcher = await asyncpg.connect(plain), await asyncpg.connect(plain)
    try:
        holding = holder.transaction()
        await holding.start()
        await holder.execute("SELECT value FROM counters WHERE name = 'games' FOR UPDATE")
        process = start_finisher(url)
        waiting = "SELECT count(*) FROM pg_locks WHERE NOT granted"
        try:
            while not await watcher.fetchval(waiting):
                assert process.poll() is None, "the finisher exited"
                await asyncio.sleep(0.05)
        finally:
            kill(process)
        await holding.rollback()
        busy = (
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND state = 'active' AND pid <> pg_backend_pid()"
        )
        while await watcher.fetchval(busy):  # the orphaned statement runs to its end
            await asyncio.sleep(0.05)
    finally:
        await holder.close()
        await watcher.close()
    rows = await stored(db)
    table = await Ledger(db, MemoryBroker()).get("t1")
    assert table is not None
    if table.status is TableStatus.FINISHED:  # the statement had all it needed: all of it
        assert len(rows["results"]) == 1 and len(rows["history"]) == 4
    else:
        assert rows["results"] == rows["history"] == rows["stats"] == []
    await assert_counted_once(db, move)
