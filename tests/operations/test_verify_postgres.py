"""`spades verify` on PostgreSQL: run while a server plays on the database, it finds every
table consistent; a tampered row is named. Backups of PostgreSQL are pg_dump's job."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import pytest

from app.cli import main
from tests.support.play import (
    SEATS,
    game_over,
    kept_alive,
    play_with_bots,
    sign_up_players,
    watching,
)
from tests.support.server import LiveServer
from tests.support.services import postgres_database

from .support import Ran, audit, spades, spades_async


@pytest.fixture
def pg_server(tmp_path: Path) -> Iterator[LiveServer]:
    with postgres_database() as url:
        live = LiveServer(tmp_path / "pg.db", database_url=url)
        live.start()
        try:
            yield live
        finally:
            live.stop()


async def play_during(server: LiveServer, command: asyncio.Task[Ran]) -> str:
    """One human and three bots play until `command` has finished; the table's id."""
    (human,) = await sign_up_players(server, 1)
    table_id = str((await human.create_table(name="verified", seed=4))["id"])
    async with kept_alive(human), watching({"NORTH": human}, table_id) as watchers:
        for seat in SEATS[1:]:
            await human.add_bot(table_id, seat)

        def done(update: dict[str, Any]) -> bool:
            return command.done() or game_over(update["view"])

        await play_with_bots({"NORTH": human}, watchers, table_id, done)
    return table_id


async def verify_while_playing(server: LiveServer) -> tuple[Ran, str]:
    """`spades verify` run while a table is played; returns what it printed, and the id
    of a table that stands still (its bots wait for its human's bid)."""
    (host,) = await sign_up_players(server, 1)
    still = str((await host.create_table(name="still", seed=3))["id"])
    for seat in SEATS[1:]:
        await host.add_bot(still, seat)
    command = asyncio.create_task(spades_async("verify", "--database-url", server.database_url))
    await play_during(server, command)
    return await command, still


def test_verify_passes_on_postgresql_while_a_server_plays(pg_server: LiveServer) -> None:
    ran, table_id = asyncio.run(verify_while_playing(pg_server))
    assert ran.code == 0, ran.out + ran.err
    assert "all consistent" in ran.err

    assert asyncio.run(audit(pg_server.database_url)) == (2, [])

    async def tamper() -> None:  # a table nothing moves any more, so only this changes it
        url = pg_server.database_url.replace("postgresql+asyncpg://", "postgresql://")
        connection = await asyncpg.connect(url)
        try:
            await connection.execute(
                "UPDATE tables SET version = version + 1 WHERE id = $1", table_id
            )
        finally:
            await connection.close()

    asyncio.run(tamper())
    ran = spades("verify", "--database-url", pg_server.database_url)
    assert ran.code == 1
    (line,) = ran.out.splitlines()
    assert line.startswith(f"{table_id}: version: the row is at version ")


def test_backup_and_restore_send_postgresql_to_pg_dump(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = "postgresql+asyncpg://postgres@127.0.0.1:5432/spades"
    for command in ("backup", "restore"):
        with pytest.raises(SystemExit) as exit_info:
            main([command, str(tmp_path / "copy.db"), "--database-url", url])
        assert exit_info.value.code == 1
        assert "pg_dump and pg_restore" in capsys.readouterr().err
