"""Changes made to the database by an operator command, found by the one server process
that runs with the in-process broker.

With Redis, an operator command (`spades admin`) publishes its change like any server
process, and every subscriber hears of it. With the in-process broker there is one
server process and nothing reaches it. So each operator change also bumps a counter row
in its own transaction (app/store/operator_marks.py), and this process reads that row
once a second (one primary-key lookup, whatever the number of tables). When it moved,
the process reads the versions of the open tables it holds and, for each that moved on
without it, reloads it, tells its subscribers to catch up from the move log (RESYNC on
its channel: the catch-up every subscriber already makes after a gap) and gives the
lobby its new state (TABLE_REMOVED once closed).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from app.broker.base import RESYNC, Broker
from app.services.tables.events import LobbyEvent
from app.services.tables.ledger import LOBBY_CHANNEL, Ledger, game_channel
from app.services.tables.snapshot import LobbyMessage
from app.store.operator_marks import operator_changes
from app.store.table_rows import table_versions

log = logging.getLogger(__name__)

CHECK_SECONDS = 1.0
BATCH = 500  # table ids per query (well under every database's parameter limit)


class OutsideChanges:
    """Looks, every `interval` seconds, for the tables an operator command changed."""

    def __init__(self, ledger: Ledger, broker: Broker[Any], interval: float = CHECK_SECONDS):
        self.ledger = ledger
        self.broker = broker
        self.interval = interval
        self._seen = 0  # the operator changes counted when this process last looked
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Count the operator changes made so far, then look every `interval` seconds."""
        self._seen = await self._counted()
        self._task = asyncio.create_task(self._check_forever())

    async def stop(self) -> None:
        """Stop looking."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _check_forever(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.check()
            except Exception:  # a database hiccup: the next look tries again
                log.warning("could not look for operator changes", exc_info=True)

    async def _counted(self) -> int:
        async with self.ledger.db.read() as session:
            return await operator_changes(session)

    async def check(self) -> list[str]:
        """If an operator changed something since the last look, announce every held
        table that moved on without this process; returns their ids."""
        counted = await self._counted()
        if counted == self._seen:
            return []
        self._seen = counted
        held = self.ledger.cached_versions()
        ids = sorted(held)
        stored: dict[str, int] = {}
        async with self.ledger.db.read() as session:
            for start in range(0, len(ids), BATCH):
                stored.update(await table_versions(session, ids[start : start + BATCH]))
        announced = []
        for table_id, version in stored.items():
            cached = self.ledger.cached_any(table_id)
            if version <= held[table_id] or (cached is not None and cached.version >= version):
                continue  # unchanged, or this process made that change meanwhile
            if await self._announce(table_id):
                announced.append(table_id)
        return announced

    async def _announce(self, table_id: str) -> bool:
        self.ledger.forget(table_id)
        table = await self.ledger.get(table_id)
        if table is None:
            return False
        await self.broker.publish(game_channel(table_id), RESYNC)
        event = LobbyEvent.TABLE_UPDATED if table.status.open else LobbyEvent.TABLE_REMOVED
        await self.broker.publish(LOBBY_CHANNEL, LobbyMessage(event, table))
        return True
