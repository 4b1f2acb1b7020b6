"""All services wired together over one database and one broker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from app.broker.base import Broker
from app.broker.memory import MemoryBroker
from app.settings import Settings
from app.store.db import Database
from app.store.migrate import upgrade

from . import wire
from .auth import AuthService
from .games import BotDriver, GameService, bot_to_move
from .ledger import Ledger
from .social import SocialService
from .streams import Streams
from .tables import TableService

log = logging.getLogger(__name__)

# How often each process looks for bot turns nobody is driving (a process died mid-turn).
BOT_SWEEP_SECONDS = 1.0
BOT_STALL_SECONDS = 1.5


def make_broker(settings: Settings) -> Broker[Any]:
    """The Redis broker when SPADES_BROKER_URL is set, else the in-process one."""
    if settings.broker_url:
        from app.broker.redis import RedisBroker

        return RedisBroker(settings.broker_url, wire.encode, wire.decode)
    return MemoryBroker()


class Services:
    """The service layer the GraphQL layer talks to."""

    def __init__(self, settings: Settings, broker: Broker[Any] | None = None) -> None:
        self.settings = settings
        self.db = Database(settings.database_url)
        self.broker: Broker[Any] = broker if broker is not None else make_broker(settings)
        self.auth = AuthService(self.db, settings)
        self.ledger = Ledger(self.db, self.broker)
        self.social = SocialService(self.db, self.broker)
        self.tables = TableService(self.ledger, self.social, settings.allow_seeded_tables)
        self.bots = BotDriver(self.ledger, settings.bot_delay_ms)
        self.games = GameService(self.ledger, self.tables, self.social, self.bots)
        self.streams = Streams(self.ledger, self.broker, self.tables, self.social)
        self._sweeper: asyncio.Task[None] | None = None
        self._stalled: dict[str, tuple[int, float]] = {}

    async def start(self) -> None:
        """Apply pending migrations, connect the broker, and resume bots that owe a move."""
        await asyncio.to_thread(upgrade, self.settings.database_url)
        await self.broker.start()
        for table in await self.ledger.open_tables():
            if bot_to_move(table) is not None:
                self.bots.kick(table.id)
        self._sweeper = asyncio.create_task(self._sweep_forever())

    async def stop(self) -> None:
        """Stop bots, the broker and the database pool."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        await self.bots.stop()
        await self.broker.close()
        await self.db.dispose()

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(BOT_SWEEP_SECONDS)
            with contextlib.suppress(Exception):
                await self.sweep_bots()

    async def sweep_bots(self) -> None:
        """Kick the bots of any table where a bot has owed a move for a while: the process
        that should have driven it may have died. Racing drivers are harmless (the ledger's
        compare-and-swap lets one bot move apply once)."""
        now = time.monotonic()
        waiting: dict[str, tuple[int, float]] = {}
        for table in await self.ledger.open_tables():
            if bot_to_move(table) is None:
                continue
            seen = self._stalled.get(table.id)
            since = seen[1] if seen is not None and seen[0] == table.version else now
            waiting[table.id] = (table.version, since)
            if now - since >= BOT_STALL_SECONDS:
                self.bots.kick(table.id)
        self._stalled = waiting
