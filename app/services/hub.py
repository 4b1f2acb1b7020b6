"""All services wired together over one database and one broker."""

from __future__ import annotations

from typing import Any

from app.broker.base import Broker
from app.broker.memory import MemoryBroker
from app.settings import Settings
from app.store.db import Database

from .auth import AuthService
from .games import BotDriver, GameService, bot_to_move
from .ledger import Ledger
from .social import SocialService
from .streams import Streams
from .tables import TableService


class Services:
    """The service layer the GraphQL layer talks to."""

    def __init__(self, settings: Settings, broker: Broker[Any] | None = None) -> None:
        self.settings = settings
        self.db = Database(settings.database_url)
        self.broker: Broker[Any] = broker if broker is not None else MemoryBroker()
        self.auth = AuthService(self.db, settings)
        self.ledger = Ledger(self.db, self.broker)
        self.social = SocialService(self.db, self.broker)
        self.tables = TableService(self.ledger, self.social, settings.allow_seeded_tables)
        self.bots = BotDriver(self.ledger, settings.bot_delay_ms)
        self.games = GameService(self.ledger, self.tables, self.social, self.bots)
        self.streams = Streams(self.ledger, self.broker, self.tables, self.social)

    async def start(self) -> None:
        """Create missing tables, connect the broker, and resume bots that owe a move."""
        await self.db.create_all()
        await self.broker.start()
        for table in await self.ledger.open_tables():
            if bot_to_move(table) is not None:
                self.bots.kick(table.id)

    async def stop(self) -> None:
        """Stop bots, the broker and the database pool."""
        await self.bots.stop()
        await self.broker.close()
        await self.db.dispose()
