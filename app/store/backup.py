"""Backups of a SQLite database, taken and restored with SQLite's online backup API.

A live database in WAL mode is never copied as a file: its newest commits may sit in
the `-wal` file, and a copy taken during a write is torn. The backup API reads every
page through SQLite, in one step on one read snapshot, so the copy is the database as
of one commit while servers keep writing (a WAL reader blocks no writer). The copy is
written beside its destination, checked, made a standalone file (rollback journal,
no `-wal`), and only then moved into place.

PostgreSQL has its own tools (`pg_dump`, `pg_restore`; docs/operations.md).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from sqlalchemy.engine import make_url

BUSY_TIMEOUT_SECONDS = 10.0
# What makes a database worth protecting from a restore: anyone signed up, any table.
CONTENT_TABLES = ("players", "tables")
MIGRATIONS_TABLE = "alembic_version"


class BackupError(Exception):
    """A backup or restore that cannot be done (nothing was changed)."""


@dataclass(frozen=True, slots=True)
class Contents:
    """How much a database holds (what a restore would overwrite)."""

    players: int
    tables: int

    @property
    def empty(self) -> bool:
        """Nobody signed up and no table: nothing a restore could lose."""
        return self.players == 0 and self.tables == 0


def sqlite_file(database_url: str) -> Path:
    """The file of a SQLite database URL; BackupError for any other database."""
    url = make_url(database_url)
    if not url.drivername.startswith("sqlite"):
        raise BackupError(
            f"{url.drivername} is not SQLite: back it up with its own tools "
            "(PostgreSQL: pg_dump and pg_restore, see docs/operations.md)"
        )
    path = url.database
    if not path or path == ":memory:" or path.startswith("file:"):
        raise BackupError(f"{database_url} is not a SQLite file")
    return Path(path)


@contextlib.contextmanager
def _connected(path: Path) -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


def backup(database: Path, target: Path, overwrite: bool = False) -> Contents:
    """Copy the live database `database` to `target` (a standalone SQLite file); returns
    what the copy holds. Refuses an existing `target` unless `overwrite`."""
    if not database.is_file():
        raise BackupError(f"there is no database at {database}")
    if target.exists() and not overwrite:
        raise BackupError(f"{target} exists: choose another file, or pass --force")
    partial = target.with_name(f".{target.name}.partial")
    partial.unlink(missing_ok=True)
    try:
        with _connected(database) as source, _connected(partial) as copy:
            source.backup(copy)  # every page in one step: one snapshot of the source
        # Opened again: the copy's header now says WAL, as the source's did.
        with _connected(partial) as copy:
            copy.execute("PRAGMA journal_mode=DELETE")  # one file, no -wal beside it
            _check(copy, partial)
            contents = _contents(copy)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return contents


def restore(source: Path, database: Path, force: bool = False) -> Contents:
    """Replace the database at `database` with the backup `source`; returns what it now
    holds. Refuses a database that holds players or tables unless `force`, and a source
    that is not a sound Spades database."""
    if not source.is_file():
        raise BackupError(f"there is no backup at {source}")
    with _connected(source) as backup_copy:
        _check(backup_copy, source)
        if not _has_table(backup_copy, MIGRATIONS_TABLE):
            raise BackupError(f"{source} is not a Spades Online database")
        contents = _contents(backup_copy)
        database.parent.mkdir(parents=True, exist_ok=True)
        with _connected(database) as target:
            current = _contents(target)
            if not current.empty and not force:
                raise BackupError(
                    f"{database} is not empty ({current.players} players, "
                    f"{current.tables} tables): pass --force to replace it"
                )
            # Through SQLite, under its locks: the -wal of the database replaced is
            # accounted for, never left to resurrect old pages.
            backup_copy.backup(target)
    return contents


def contents_of(database: Path) -> Contents:
    """How many players and tables the database holds (none if there is no file)."""
    if not database.is_file():
        return Contents(0, 0)
    with _connected(database) as connection:
        return _contents(connection)


def _check(connection: sqlite3.Connection, path: Path) -> None:
    try:
        (result,) = connection.execute("PRAGMA quick_check").fetchone()
    except sqlite3.DatabaseError as exc:
        raise BackupError(f"{path} is not a sound SQLite database: {exc}") from None
    if result != "ok":
        raise BackupError(f"{path} is not a sound SQLite database: {result}")


def _has_table(connection: sqlite3.Connection, name: str) -> bool:
    row = connection.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
    ).fetchone()
    return row is not None


def _contents(connection: sqlite3.Connection) -> Contents:
    counts = [
        connection.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
        if _has_table(connection, name)
        else 0
        for name in CONTENT_TABLES
    ]
    return Contents(*counts)
