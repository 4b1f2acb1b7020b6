"""All services wired together over one database and one broker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

from app.broker.base import RESYNC, Broker, Subscription
from app.broker.memory import MemoryBroker
from app.services import broker_codec as wire
from app.services.accounts.auth import AuthService, TokenRevoked, hash_token
from app.services.accounts.profiles import ProfileService
from app.services.accounts.results import game_ends, ratings_ahead
from app.services.chat.rate_limit import ChatLimiter
from app.services.chat.service import ChatService
from app.services.live.presence import PresenceService, PresenceTimings
from app.services.live.presence_store import MemoryPresence, PresenceStore, RedisPresence
from app.services.live.streams import Streams
from app.services.lobby.service import TableService
from app.services.play.bots import BotDriver
from app.services.play.clock_sweep import ClockTimers
from app.services.play.commands import GameService
from app.services.play.expert_pool import ExpertPool
from app.services.play.reactions import Reactions
from app.services.play.rematch import RematchService
from app.services.rate_limits import Limiter, MemoryLimiter, RedisLimiter
from app.services.social.service import SocialService
from app.services.tables.ledger import Ledger
from app.settings import Settings
from app.store.db import Database
from app.store.migrate import upgrade

log = logging.getLogger(__name__)

REVOCATIONS_CHANNEL = "tokens"


def make_limiter(settings: Settings) -> Limiter:
    """Rate limits shared through Redis when SPADES_BROKER_URL is set, else in memory."""
    if settings.broker_url:
        return RedisLimiter(settings.broker_url, enabled=settings.rate_limits)
    return MemoryLimiter(enabled=settings.rate_limits)


def make_presence_store(settings: Settings) -> PresenceStore:
    """Presence counted in Redis when SPADES_BROKER_URL is set, else in memory."""
    if settings.broker_url:
        return RedisPresence(settings.broker_url, settings.presence_ttl_seconds)
    return MemoryPresence()


def make_broker(settings: Settings) -> Broker[Any]:
    """The Redis broker when SPADES_BROKER_URL is set, else the in-process one."""
    if settings.broker_url:
        from app.broker.redis import RedisBroker

        return RedisBroker(settings.broker_url, wire.encode, wire.decode)
    return MemoryBroker()


def cursor_key(settings: Settings) -> bytes:
    """The key page cursors are signed with: the configured secret, else a random one."""
    if settings.secret:
        return settings.secret.encode()
    return secrets.token_bytes(32)


class Services:
    """The service layer the GraphQL layer talks to."""

    def __init__(self, settings: Settings, broker: Broker[Any] | None = None) -> None:
        self.settings = settings
        self.db = Database(settings.database_url)
        self.broker: Broker[Any] = broker if broker is not None else make_broker(settings)
        self.auth = AuthService(self.db, settings)
        self.ledger = Ledger(self.db, self.broker)
        self.ledger.clock_scale = settings.turn_clock_scale
        # Careers: written in the transaction of a game's last change.
        self.ledger.on_finish = game_ends(self.ledger.moves)
        self.ledger.prepare_finish = ratings_ahead(self.db)
        self.profiles = ProfileService(self.db, cursor_key(settings))
        self.social = SocialService(self.db, self.broker)
        self.tables = TableService(self.ledger, self.social, settings.allow_seeded_tables)
        self.bots = BotDriver(
            self.ledger,
            settings.bot_delay_ms,
            ExpertPool(settings.bot_workers, settings.expert_ms),
        )
        self.clocks = ClockTimers(self.ledger, self.db, settings.clock_sweep_seconds)
        # The reactions to every committed change, in one place.
        self.reactions = Reactions(self.bots, self.clocks)
        self.ledger.react(self.reactions.committed)
        self.games = GameService(self.ledger, self.tables, self.social)
        self.presence = PresenceService(
            make_presence_store(settings),
            self.broker,
            self.ledger,
            self.db,
            PresenceTimings(
                grace=settings.presence_grace_seconds,
                heartbeat=settings.presence_heartbeat_seconds,
                reconnect=settings.reconnect_seconds,
                idle=settings.idle_table_seconds,
            ),
        )
        self.streams = Streams(self.ledger, self.broker, self.tables, self.social, self.presence)
        self.limits: Limiter = make_limiter(settings)
        self.rematch = RematchService(
            self.ledger, self.tables, self.social, settings.rematch_seconds
        )
        # The chat limit is a rule of chat: on whatever SPADES_RATE_LIMITS says.
        self.chat = ChatService(
            self.db,
            self.broker,
            self.ledger,
            self.tables,
            self.social,
            ChatLimiter(settings.broker_url),
        )
        self._revocations: asyncio.Task[None] | None = None
        # Called with a token hash whenever a token is revoked in any process.
        self.revocation_handlers: list[Callable[[str], Awaitable[None]]] = []
        # Called when revocations may have been missed (the broker reconnected): each
        # handler rechecks the tokens it holds against the database.
        self.recheck_handlers: list[Callable[[], Awaitable[None]]] = []

    async def start(self) -> None:
        """Apply pending migrations, connect the broker, and resume bots that owe a move."""
        await asyncio.to_thread(upgrade, self.settings.database_url)
        await self.broker.start()
        open_tables = await self.ledger.open_tables()
        self.reactions.resume(open_tables)
        await self.clocks.start()
        await self.presence.start(open_tables)
        revocations = await self.broker.subscribe(REVOCATIONS_CHANNEL)
        self._revocations = asyncio.create_task(self._hear_revocations(revocations))

    async def settle(self, timeout: float, hand_over: bool = True) -> None:
        """Before `stop`: start no new work of this process's own (bot turns, turn
        clocks) and give what is under way up to `timeout` seconds to finish, so that
        nothing is cut between its commit and its publication. With `hand_over` (a drain
        that gave a load balancer time to send clients elsewhere) and shared presence,
        the sockets just closed also get their grace period to come back on another
        process. What is left is taken up by the clock sweep of another process (or of
        this one when it starts again)."""
        await asyncio.gather(
            self.bots.settle(timeout),
            self.clocks.settle(timeout),
            self.presence.settle(timeout if hand_over else 0.0),
        )

    async def stop(self) -> None:
        """Stop bots, the broker and the database pool."""
        if self._revocations is not None:
            self._revocations.cancel()
            await asyncio.gather(self._revocations, return_exceptions=True)
        await self.presence.stop()
        await self.clocks.stop()
        await self.bots.stop()
        await self.limits.close()
        await self.chat.limiter.close()
        await self.broker.close()
        await self.ledger.close()
        await self.db.dispose()

    async def sign_out(self, token: str) -> bool:
        """Revoke a token everywhere: this process at once, the others through the broker."""
        revoked = await self.auth.sign_out(token)
        if revoked:
            message = TokenRevoked(hash_token(token))
            try:
                await self.broker.publish(REVOCATIONS_CHANNEL, message)
            except Exception:
                log.warning("could not broadcast a token revocation", exc_info=True)
                await self._revoked(message.token_hash)
        return revoked

    async def _hear_revocations(self, subscription: Subscription[Any]) -> None:
        with subscription:
            while True:
                message = await subscription.get()
                if isinstance(message, TokenRevoked):
                    await self._revoked(message.token_hash)
                if message is RESYNC:
                    # The broker reconnected (or the queue overflowed): revocations may
                    # have been lost. Recheck every token held here.
                    await self._recheck_tokens()

    async def _recheck_tokens(self) -> None:
        self.auth.forget_all()
        for handler in self.recheck_handlers:
            with contextlib.suppress(Exception):
                await handler()

    async def _revoked(self, token_hash: str) -> None:
        self.auth.forget(token_hash)
        for handler in self.revocation_handlers:
            with contextlib.suppress(Exception):
                await handler(token_hash)
