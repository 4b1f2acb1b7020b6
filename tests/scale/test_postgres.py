"""The server on PostgreSQL: a whole game, and migrations on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import asyncpg  # type: ignore[import-untyped]
import pytest
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError

from app.store.migrate import alembic_config, check, upgrade
from tests.support.server import ROOT

from .conftest import StartServer
from .harness import (
    FastApi,
    assert_consecutive,
    assert_log_complete,
    move_log,
    plain_url,
    play_turns_until_over,
    watching,
)

APP_TABLES = {"players", "tokens", "tables", "seats", "moves", "alembic_version"}


def head_revision(database_url: str) -> str:
    """The newest migration shipped with the app."""
    head = ScriptDirectory.from_config(alembic_config(database_url)).get_current_head()
    assert head is not None
    return head


async def postgres_tables_and_revision(database_url: str) -> tuple[set[str], str | None]:
    connection = await asyncpg.connect(plain_url(database_url))
    try:
        names = await connection.fetch(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
        )
        tables = {r["tablename"] for r in names}
        revision = None
        if "alembic_version" in tables:
            revision = await connection.fetchval("SELECT version_num FROM alembic_version")
    finally:
        await connection.close()
    return tables, revision


def sqlite_tables_and_revision(path: Path) -> tuple[set[str], str | None]:
    with sqlite3.connect(path) as connection:
        tables = {r[0] for r in connection.execute("SELECT name FROM sqlite_master")}
        revision = None
        if "alembic_version" in tables:
            revision = connection.execute("SELECT version_num FROM alembic_version").fetchone()[0]
    return tables, revision


async def test_one_human_and_three_bots_play_a_whole_game_on_postgres(
    pg_url: str, start_server: StartServer
) -> None:
    server = start_server(pg_url)
    alice = await FastApi(server).sign_up()
    table = await alice.create_table(name="pg", seed=7)
    table_id = table["id"]
    async with watching(alice, table_id) as watch:
        assert (await watch.next())["event"] == "SNAPSHOT"
        for seat in ("EAST", "SOUTH", "WEST"):
            await alice.add_bot(table_id, seat)
        # Bidding 13 gets North-South set every hand: the game ends after a few hands.
        final = await play_turns_until_over(alice, table_id, watch, "NORTH", bid=13)

    assert final["winner"] in ("NORTH_SOUTH", "EAST_WEST")
    assert watch.events[-1] == "GAME_OVER"
    assert "SNAPSHOT" not in watch.events[1:]
    assert_consecutive(watch)
    rows, version = await move_log(pg_url, table_id)
    assert version == final["version"]
    assert_log_complete(rows, version)
    # What the database holds reads back as the same finished game.
    assert await alice.game(table_id) == final


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migrations_reach_head_and_the_models_have_not_drifted(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        path = tmp_path / "migrated.db"
        url = f"sqlite+aiosqlite:///{path}"
    else:
        url = request.getfixturevalue("pg_url")
    upgrade(url)
    upgrade(url)  # idempotent
    check(url)  # raises when the models and the migrations disagree
    if backend == "sqlite":
        tables, revision = sqlite_tables_and_revision(path)
    else:
        tables, revision = asyncio.run(postgres_tables_and_revision(url))
    assert tables >= APP_TABLES
    assert revision == head_revision(url)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_drift_check_fails_on_a_database_that_was_never_migrated(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    if backend == "sqlite":
        url = f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
    else:
        url = request.getfixturevalue("pg_url")
    with pytest.raises(CommandError):
        check(url)


def test_spades_migrate_command_creates_the_schema_on_a_fresh_postgres_database(
    pg_url: str,
) -> None:
    tables, revision = asyncio.run(postgres_tables_and_revision(pg_url))
    assert not tables & APP_TABLES and revision is None

    command = [sys.executable, "-c", "from app.cli import main; main()", "migrate"]
    for _ in range(2):  # a second run finds nothing to do
        result = subprocess.run(
            [*command, "--database-url", pg_url],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert "up to date" in result.stderr

    tables, revision = asyncio.run(postgres_tables_and_revision(pg_url))
    assert tables >= APP_TABLES
    assert revision == head_revision(pg_url)
    check(pg_url)
