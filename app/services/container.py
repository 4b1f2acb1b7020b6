"""All services wired together over one database and one broker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.broker.base import RESYNC, Broker, Subscription
from app.broker.memory import MemoryBroker
from app.services import broker_codec as wire
from app.services.accounts.auth import AuthService, TokenRevoked, hash_token
from app.services.accounts.profiles import ProfileService
from app.services.accounts.results import game_ends, ratings_ahead
from app.services.accounts.revocations import PlayerRevocations
from app.services.chat.rate_limit import ChatLimiter
from app.services.chat.service import ChatService
from app.services.live.outside_changes import OutsideChanges
from app.services.live.presence import PresenceService, PresenceTimings
from app.services.live.presence_store import MemoryPresence, PresenceStore, RedisPresence
from app.services.live.streams import Streams
from app.services.lobby.service import TableService
from app.services.moderation.authority import Authority
from app.services.moderation.enforcement import BanEnforcement
from app.services.moderation.model import OPERATOR, Actor
from app.services.moderation.sanctions import SanctionService
from app.services.moderation.service import ModerationService
from app.services.operations.tables import TableOperations
from app.services.play.bots import BotDriver
from app.services.play.clock_sweep import ClockTimers
from app.services.play.commands import GameService
from app.services.play.expert_pool import ExpertPool
from app.services.play.reactions import Reactions
from app.services.play.rematch import RematchService
from app.services.quickplay.matchmaker import QuickPlayTimings
from app.services.quickplay.service import QuickPlayService
from app.services.quickplay.watchers import MemoryWatchers, RedisWatchers, WatchStore
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


def make_watch_store(settings: Settings) -> WatchStore:
    """Quick play's watchers counted in Redis when SPADES_BROKER_URL is set, else in memory."""
    if settings.broker_url:
        return RedisWatchers(settings.broker_url, settings.presence_ttl_seconds)
    return MemoryWatchers()


def quickplay_timings(settings: Settings) -> QuickPlayTimings:
    """Quick play's timings: the settings, a lease of three waves (3 s at least) and the
    presence heartbeat."""
    wave = settings.quickplay_wave_seconds
    return QuickPlayTimings(
        bot_seconds=settings.quickplay_bot_seconds,
        wave_seconds=wave,
        lease_seconds=max(3.0, 3 * wave),
        heartbeat_seconds=settings.presence_heartbeat_seconds,
    )


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
        # Alone on its database with no broker, this process finds by itself the tables
        # an operator command changed.
        self.outside = (
            OutsideChanges(self.ledger, self.broker)
            if isinstance(self.broker, MemoryBroker)
            else None
        )
        # Every token of a player revoked on every process at once (a ban).
        self.revocations = PlayerRevocations(self.broker, self.auth)
        self.moderation = ModerationService(
            self.db,
            self.ledger,
            self.chat,
            self.revocations,
            self.profiles.cursor_key,
            settings.moderation_watch_seconds,
        )
        self.quickplay = QuickPlayService(
            self.db,
            self.ledger,
            self.broker,
            make_watch_store(settings),
            quickplay_timings(settings),
        )
        # A ban ends the player's search for a game (docs/rules.md, Moderation).
        self.moderation.on_ban.append(self._ban_ends_quick_play)
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
        await self.quickplay.start()
        revocations = await self.broker.subscribe(REVOCATIONS_CHANNEL)
        self._revocations = asyncio.create_task(self._hear_revocations(revocations))
        if self.outside is not None:
            await self.outside.start()
        await self.revocations.start()
        await self.moderation.start()

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
        if self.outside is not None:
            await self.outside.stop()
        if self._revocations is not None:
            self._revocations.cancel()
            await asyncio.gather(self._revocations, return_exceptions=True)
        await self.moderation.stop()
        await self.revocations.stop()
        await self.quickplay.stop()
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

    async def _ban_ends_quick_play(self, player_id: str) -> None:
        await self.quickplay.cancel_searching(player_id)

    async def _revoked(self, token_hash: str) -> None:
        self.auth.forget(token_hash)
        for handler in self.revocation_handlers:
            with contextlib.suppress(Exception):
                await handler(token_hash)


class BrokerUnreachable(Exception):
    """An operator command cannot reach the configured broker: it changes nothing, as
    the servers' subscribers would not hear of it."""


@dataclass(frozen=True, slots=True)
class Operator:
    """What the operator commands (`spades admin`) act through: the database, and the
    broker every server process listens to, so a change made here reaches their
    subscribers as a change made by one of them does. The ledger has no reactions: a bot
    owed a turn afterwards is driven by a server (its watchdog), not by this short-lived
    process."""

    tables: TableOperations
    authority: Authority
    sanctions: SanctionService
    broadcast: bool  # a broker reaches the running servers
    actor: Actor  # the operator: recorded as no player


@contextlib.asynccontextmanager
async def operator_services(settings: Settings) -> AsyncIterator[Operator]:
    """The operator's services on `settings`' database and broker, for one command.
    Raises BrokerUnreachable when a broker is configured and cannot be reached. Without
    a broker, the one server process finds the change in the database by itself
    (app/services/live/outside_changes.py)."""
    db = Database(settings.database_url)
    broker = make_broker(settings)
    ledger = Ledger(db, broker)
    try:
        await broker.start()
        if not broker.healthy:
            raise BrokerUnreachable(f"cannot reach the broker at {settings.broker_url}")
        revocations = PlayerRevocations(broker, AuthService(db, settings))
        authority = Authority(db)
        sanctions = SanctionService(db, authority, BanEnforcement(db, ledger, revocations))
        broadcast = settings.broker_url is not None
        yield Operator(TableOperations(ledger), authority, sanctions, broadcast, OPERATOR)
    finally:
        await broker.close()
        await ledger.close()
        await db.dispose()
