"""`spades backup`, `spades restore` and `spades verify`: the database's safety net."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from app.settings import load_settings


def _database_url(args: argparse.Namespace) -> str:
    return load_settings().with_overrides(database_url=args.database_url).database_url


def _backup(args: argparse.Namespace) -> int:
    from app.store.backup import BackupError, backup, sqlite_file

    try:
        database = sqlite_file(_database_url(args))
        contents = backup(database, Path(args.file), overwrite=args.force)
    except BackupError as exc:
        print(f"backup: {exc}", file=sys.stderr)
        return 1
    print(
        f"backed up {database} to {args.file} "
        f"({contents.players} players, {contents.tables} tables)",
        file=sys.stderr,
    )
    return 0


def _restore(args: argparse.Namespace) -> int:
    from app.store.backup import BackupError, restore, sqlite_file

    try:
        database = sqlite_file(_database_url(args))
        contents = restore(Path(args.file), database, force=args.force)
    except BackupError as exc:
        print(f"restore: {exc}", file=sys.stderr)
        return 1
    print(
        f"restored {args.file} into {database} "
        f"({contents.players} players, {contents.tables} tables); "
        "`spades serve` (or `spades migrate`) brings its schema up to date",
        file=sys.stderr,
    )
    return 0


def _verify(args: argparse.Namespace) -> int:
    return asyncio.run(_verify_all(_database_url(args)))


def _sqlite_exists(database_url: str) -> bool:
    from app.store.backup import BackupError, sqlite_file

    try:
        return sqlite_file(database_url).is_file()
    except BackupError:  # an in-memory database: nothing to verify, but nothing missing
        return True


async def _verify_all(database_url: str) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from app.services.operations.verify import Audit
    from app.store.db import Database

    if database_url.startswith("sqlite") and not _sqlite_exists(database_url):
        print(f"verify: there is no database at {database_url}", file=sys.stderr)
        return 1
    db = Database(database_url)
    audit = Audit(db)
    found = 0
    try:
        async for mismatch in audit.mismatches():
            found += 1
            print(mismatch.line(), flush=True)
    except SQLAlchemyError as exc:
        print(f"verify: cannot read the database: {exc}", file=sys.stderr)
        return 1
    finally:
        await db.dispose()
    verdict = "all consistent" if found == 0 else f"{found} mismatches"
    summary = f"verify: {audit.tables} tables replayed from their move logs, {verdict}"
    print(summary, file=sys.stderr)
    return 0 if found == 0 else 1


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register backup, restore and verify."""
    bak = commands.add_parser(
        "backup", help="copy the SQLite database to FILE, consistently, while servers run"
    )
    bak.add_argument("file")
    bak.add_argument("--database-url", default=None)
    bak.add_argument("--force", action="store_true", help="overwrite FILE if it exists")
    bak.set_defaults(run=_backup)

    res = commands.add_parser("restore", help="replace the SQLite database with a backup")
    res.add_argument("file")
    res.add_argument("--database-url", default=None)
    res.add_argument(
        "--force", action="store_true", help="replace a database that holds players or tables"
    )
    res.set_defaults(run=_restore)

    ver = commands.add_parser(
        "verify", help="replay every table's move log and compare it with the stored table"
    )
    ver.add_argument("--database-url", default=None)
    ver.set_defaults(run=_verify)
