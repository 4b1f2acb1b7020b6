"""A disconnection remembered for a table that no longer exists (a database restored or
recreated under a Redis that outlived it) is settled once, not retried forever."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from app.broker.memory import MemoryBroker
from app.services.live.presence import PresenceService
from app.services.live.presence_store import MemoryPresence
from app.services.tables.ledger import Ledger
from app.store.db import Database
from app.store.migrate import upgrade
from tests.store.databases import database_url


async def test_an_absent_player_of_a_table_that_is_gone_is_settled_without_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = database_url(tmp_path / "spades.db")
    await asyncio.to_thread(upgrade, url)
    db = Database(url)
    broker: MemoryBroker[object] = MemoryBroker()
    store = MemoryPresence()
    presence = PresenceService(store, broker, Ledger(db, broker), db)
    try:
        await store.connect("no-such-table", "p1")
        mark = await store.disconnect("no-such-table", "p1")
        assert mark is not None
        with caplog.at_level(logging.WARNING):
            await presence._replace(("no-such-table", "p1"), mark.changed_at)
        assert await store.absent_before(mark.changed_at + 1) == []
        assert "could not replace" not in caplog.text
    finally:
        await db.dispose()
