"""The one-trip move writers: a compare-and-swap plus the move-log rows, all or nothing,
on a real SQLite file and a real PostgreSQL database (each also shared by two ledgers,
as by two processes)."""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import exc, func, select

from app.broker.memory import MemoryBroker
from app.rules.bots import basic_move
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game
from app.services.play.moves import apply_move
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger, _row_values
from app.services.tables.snapshot import TableSnapshot, TableStatus
from app.store import table_rows as repo
from app.store.db import Database
from app.store.migrate import upgrade
from app.store.models import MoveRow, TableRow
from app.store.postgres_writer import PostgresMoveWriter
from app.store.sqlite_writer import CHECKPOINT_EVERY, SqliteMoveWriter
from app.store.writers import MOVE_COLUMNS, TABLE_COLUMNS, MoveWriter
from tests.store.databases import database_url, migrated_with_players
from tests.support.server import free_port
from tests.support.services import POSTGRES_ADMIN_URL, postgres_database
from tests.support.tables import table_snapshot

PLAYERS = ["p0", "p1", "p2", "p3"]


@pytest.fixture
async def url(empty_url: str) -> str:
    """A migrated database with four players."""
    return await migrated_with_players(empty_url, PLAYERS)


@pytest.fixture
async def db(url: str) -> AsyncIterator[Database]:
    database = Database(url)
    yield database
    await database.dispose()


def new_table(table_id: str = "t1") -> TableSnapshot:
    """A full table whose game has not started yet (as `Ledger.create` stores it)."""
    return table_snapshot(id=table_id, name="writer")


def start(table: TableSnapshot) -> Change:
    """The change that deals the first hand (version 2, log seq 2)."""
    game, _ = Game.start(PLAYERS, seed=5)
    change = Change()
    change.add("HAND_DEALT", table.evolve(game=game, version=2, status=TableStatus.PLAYING))
    change.log_entry(2, 1, {"type": "start"})
    return change


async def started(ledger: Ledger) -> TableSnapshot:
    await ledger.create(new_table())
    _, table = await ledger.change("t1", start)
    return table


def next_move(table: TableSnapshot) -> Change:
    assert table.game is not None and table.game.turn is not None
    return apply_move(table, basic_move(table.game, table.game.turn, random.Random(1)))


def values(table: TableSnapshot) -> dict[str, Any]:
    """The table row's values after a change (as the ledger writes them)."""
    return _row_values(table)


async def stored(db: Database, table_id: str) -> tuple[int, int]:
    """(version of the table row, number of move-log rows)."""
    async with db.read() as session:
        version = await session.scalar(select(TableRow.version).where(TableRow.id == table_id))
        count = await session.scalar(
            select(func.count()).select_from(MoveRow).where(MoveRow.table_id == table_id)
        )
    assert version is not None and count is not None
    return int(version), int(count)


def test_each_database_kind_gets_its_move_writer(tmp_path: Path) -> None:
    assert isinstance(Database(database_url(tmp_path / "x.db")).move_writer, SqliteMoveWriter)
    postgres = Database("postgresql+asyncpg://u@127.0.0.1/db").move_writer
    assert isinstance(postgres, PostgresMoveWriter)


async def test_a_game_move_updates_the_row_and_appends_its_log_rows(db: Database) -> None:
    ledger = Ledger(db, MemoryBroker())
    await started(ledger)
    change, after = await ledger.change("t1", next_move)
    assert after.version == 3
    assert await stored(db, "t1") == (3, 2)
    assert db.move_writer is not None and await db.move_writer.version("t1") == 3
    fresh = await Ledger(db, MemoryBroker()).get("t1")  # read back from the file
    assert fresh is not None and fresh.game is not None and after.game is not None
    assert fresh.version == 3 and fresh.game.hand.bids == after.game.hand.bids
    assert [seq for seq, _, _ in await ledger.moves("t1")] == [2, 3]
    assert change.log[0][2]["type"] == "bid"


async def test_a_stale_expected_version_writes_nothing(db: Database) -> None:
    ledger = Ledger(db, MemoryBroker())
    table = await started(ledger)
    writer = db.move_writer
    assert writer is not None
    change = next_move(table)
    rows = repo.move_rows("t1", change.log)
    assert await writer.commit("t1", 7, values(change.steps[-1].table), rows) is False
    assert await stored(db, "t1") == (2, 1)


async def test_a_duplicate_log_row_rolls_the_whole_move_back(db: Database) -> None:
    ledger = Ledger(db, MemoryBroker())
    table = await started(ledger)  # the log holds seq 2
    writer = db.move_writer
    assert writer is not None
    change = next_move(table)
    row = repo.move_rows("t1", [(2, 1, {"type": "bid"})])
    with pytest.raises(exc.IntegrityError):
        await writer.commit("t1", 2, values(change.steps[-1].table), row)
    assert await stored(db, "t1") == (2, 1)  # the row update was rolled back too
    # The connection is usable afterwards (no transaction left open).
    assert await writer.version("t1") == 2


@pytest.fixture
async def sqlite_db(tmp_path: Path) -> AsyncIterator[Database]:
    """A migrated SQLite file with four players (what its writer alone does)."""
    database = Database(await migrated_with_players(database_url(tmp_path / "s.db"), PLAYERS))
    yield database
    await database.dispose()


def sqlite_path(db: Database) -> str:
    writer = db.move_writer
    assert isinstance(writer, SqliteMoveWriter)
    return writer.path


async def test_a_sqlite_move_waits_on_its_thread_while_another_connection_writes(
    sqlite_db: Database,
) -> None:
    db = sqlite_db
    # The loop's own connection never waits (it would stop the server): a locked database
    # sends the move to the writer thread, which waits with the busy timeout.
    ledger = Ledger(db, MemoryBroker())
    table = await started(ledger)
    writer = db.move_writer
    assert writer is not None
    other = sqlite3.connect(sqlite_path(db), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    try:
        change = next_move(table)
        commit = asyncio.create_task(
            writer.commit("t1", 2, values(change.steps[-1].table), repo.move_rows("t1", change.log))
        )
        await asyncio.sleep(0.3)
        assert not commit.done()  # waiting, not failed, and the loop still runs
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert await commit is True
    assert await stored(db, "t1") == (3, 2)


async def test_sqlite_moves_hand_their_checkpoints_to_the_thread(sqlite_db: Database) -> None:
    db = sqlite_db
    ledger = Ledger(db, MemoryBroker())
    table = await started(ledger)
    writer = db.move_writer
    assert isinstance(writer, SqliteMoveWriter)
    for _ in range(CHECKPOINT_EVERY + 5):
        if table.game is None or table.game.turn is None:
            break
        _, table = await ledger.change("t1", next_move)
    else:
        await asyncio.sleep(0.1)
    # Moves get scarce when a game ends: fill up with version-only writes if needed.
    for expected in range(table.version, table.version + CHECKPOINT_EVERY + 5):
        if writer.checkpoints:
            break
        assert await writer.commit("t1", expected, {**values(table), "version": expected + 1}, [])
        await asyncio.sleep(0)
    for _ in range(100):
        if writer.checkpoints:
            break
        await asyncio.sleep(0.01)
    assert writer.checkpoints >= 1


async def test_an_unreachable_database_is_an_outage_not_a_crash(tmp_path: Path) -> None:
    writers: list[MoveWriter] = [
        SqliteMoveWriter(str(tmp_path / "missing" / "spades.db"), busy_timeout_ms=100),
        PostgresMoveWriter(f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/test"),
    ]
    for writer in writers:
        try:
            with pytest.raises((exc.DBAPIError, OSError)):
                await writer.version("t1")
        finally:
            await writer.close()


async def test_two_ledgers_on_one_file_never_both_apply_a_move(url: str) -> None:
    # Two Database objects act as two processes: each decides on its own cached copy.
    first_db, second_db = Database(url), Database(url)
    try:
        first, second = Ledger(first_db, MemoryBroker()), Ledger(second_db, MemoryBroker())
        await started(first)
        assert await second.get("t1") is not None  # cached at version 2
        await first.change("t1", next_move)
        # The second one's cache is stale: with an expected version it is a CONFLICT...
        with pytest.raises(RuleError) as refused:
            await second.change("t1", next_move, expected_version=2)
        assert refused.value.code is ErrorCode.CONFLICT
        # ...and without one the move is decided again on the fresh table.
        _, after = await second.change("t1", next_move)
        assert after.version == 4
        assert await stored(first_db, "t1") == (4, 3)
    finally:
        await first_db.dispose()
        await second_db.dispose()


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with postgres_database() as url:
        yield url


async def test_a_postgres_connection_killed_while_idle_is_an_outage_then_replaced(
    postgres_url: str,
) -> None:
    await asyncio.to_thread(upgrade, postgres_url)
    writer = PostgresMoveWriter(postgres_url)
    name = postgres_url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        for _ in range(20):  # the race is the server's: try it often
            assert await writer.version("t1") is None  # a pooled connection, idle now
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                name,
            )
            # The dead connection answers an outage (never an unexpected error)...
            with contextlib.suppress(exc.DBAPIError):
                await writer.version("t1")
            # ...and is not used again.
            assert await writer.version("t1") is None
    finally:
        await admin.close()
        await writer.close()


async def test_a_change_without_log_rows_is_still_told_applied(db: Database) -> None:
    ledger = Ledger(db, MemoryBroker())
    table = await started(ledger)
    writer = db.move_writer
    assert writer is not None
    change = next_move(table)
    assert await writer.commit("t1", 2, values(change.steps[-1].table), []) is True
    assert await stored(db, "t1") == (3, 1)
    assert await writer.commit("t1", 2, values(change.steps[-1].table), []) is False


async def row_values(db: Database, table_id: str) -> dict[str, Any]:
    """The table row's columns a game change sets, but its write time, as stored."""
    async with db.read() as session:
        row = await session.scalar(select(TableRow).where(TableRow.id == table_id))
    assert row is not None
    return {name: getattr(row, name) for name in TABLE_COLUMNS if name != "updated_at"}


async def test_a_move_sets_only_the_columns_it_changes_yet_the_row_is_always_the_table(
    db: Database,
) -> None:
    # Two ledgers, as two processes: the second's cached table goes stale, and it reads
    # the row back before it decides again. Whole game: turn deadlines move, the status
    # and the finish time change at its end.
    first, second = Ledger(db, MemoryBroker()), Ledger(db, MemoryBroker())
    table = await started(first)
    assert await row_values(db, "t1") == _row_values(table)
    changes = 0
    while table.status is TableStatus.PLAYING:
        ledger = second if changes % 5 == 4 else first
        _, table = await ledger.change("t1", next_move)
        assert await row_values(db, "t1") == _row_values(table)
        changes += 1
    assert table.status is TableStatus.FINISHED and table.finished_at is not None


def test_the_writers_set_every_column_the_ledger_writes() -> None:
    # The session path writes whatever `_row_values` holds; the writers only the
    # columns they know: a column added to one and not the other would be lost silently.
    table = new_table().evolve(game=Game.start(PLAYERS, seed=5)[0])
    assert set(_row_values(table)) | {"updated_at"} == set(TABLE_COLUMNS)
    assert set(TABLE_COLUMNS) <= set(TableRow.__table__.c.keys())  # type: ignore[attr-defined]
    assert {"table_id", *MOVE_COLUMNS} <= set(MoveRow.__table__.c.keys())  # type: ignore[attr-defined]
