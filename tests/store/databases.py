"""The databases of the store tests: a SQLite file's URL, a migrated database with players."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

from app.store.db import Database
from app.store.migrate import upgrade
from app.store.models import PlayerRow


def database_url(path: Path) -> str:
    """The URL of a SQLite file."""
    return f"sqlite+aiosqlite:///{path}"


async def migrated_with_players(url: str, players: Sequence[str]) -> str:
    """Migrate the database at `url` and sign up `players` (ids = usernames)."""
    await asyncio.to_thread(upgrade, url)
    db = Database(url)
    try:
        async with db.write() as session:
            for player in players:
                session.add(
                    PlayerRow(id=player, username=player, username_key=player, password_hash="x")
                )
    finally:
        await db.dispose()
    return url
