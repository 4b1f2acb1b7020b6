"""Running the `spades` operator commands as an operator does: a separate process,
pointed at the database (and broker) of running servers."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from app.rules.audit import Mismatch
from app.services.operations.verify import Audit
from app.store.db import Database
from tests.support.server import ROOT, TEST_ENV

SPADES = Path(sys.executable).with_name("spades")


@dataclass(frozen=True)
class Ran:
    """A finished command: its exit code and what it printed."""

    code: int
    out: str
    err: str


def spades(*argv: str, env: dict[str, str] | None = None, timeout: float = 120) -> Ran:
    """Run `spades ARGV...` in a process of its own."""
    done = subprocess.run(
        [str(SPADES), *argv],
        cwd=ROOT,
        env={**os.environ, **TEST_ENV, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return Ran(done.returncode, done.stdout, done.stderr)


async def spades_async(*argv: str, env: dict[str, str] | None = None) -> Ran:
    """`spades` run without holding up the event loop (servers keep being played)."""
    return await asyncio.to_thread(spades, *argv, env=env)


def sqlite_url(path: Path) -> str:
    """The database URL of a SQLite file."""
    return f"sqlite+aiosqlite:///{path}"


async def audit(database_url: str) -> tuple[int, list[Mismatch]]:
    """How many tables the database holds, and every mismatch with their move logs."""
    db = Database(database_url)
    try:
        checked = Audit(db)
        found = [m async for m in checked.mismatches()]
        return checked.tables, found
    finally:
        await db.dispose()


def table_versions(database: Path) -> dict[str, int]:
    """Every table's version, read straight from a SQLite file."""
    connection = sqlite3.connect(database)
    try:
        return dict(connection.execute("SELECT id, version FROM tables").fetchall())
    finally:
        connection.close()


def execute(database: Path, sql: str, *parameters: object) -> None:
    """Change a SQLite file behind the server's back (a corruption, for the audit)."""
    connection = sqlite3.connect(database)
    try:
        with connection:
            connection.execute(sql, parameters)
    finally:
        connection.close()
