"""Quick play's operations: start, cancel, the caller's latest ticket, how many search,
and the stream of a player's ticket changes (which is also what keeps a ticket)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncGenerator
from typing import Any

from sqlalchemy.exc import IntegrityError

from app.broker.base import RESYNC, Broker
from app.rules.errors import ErrorCode, RuleError
from app.rules.matchmaking import TicketStatus
from app.services.accounts.auth import Player
from app.services.quickplay.announce import announce
from app.services.quickplay.matchmaker import Matchmaker, QuickPlayTimings
from app.services.quickplay.model import (
    NUDGE_CHANNEL,
    MatchmakingNudge,
    QuickPlayTicket,
    TicketChanged,
    ticket_channel,
)
from app.services.quickplay.watchers import WatchStore
from app.services.tables.ledger import Ledger
from app.store import seat_guard
from app.store import tickets as rows
from app.store.db import Database

log = logging.getLogger(__name__)


class QuickPlayService:
    """Tickets for the API; the matchmaker and the watchers' heartbeat in the background."""

    def __init__(
        self,
        db: Database,
        ledger: Ledger,
        broker: Broker[Any],
        watchers: WatchStore,
        timings: QuickPlayTimings | None = None,
    ) -> None:
        self.db = db
        self.broker = broker
        self.watchers = watchers
        self.timings = timings or QuickPlayTimings()
        self.matchmaker = Matchmaker(db, ledger, broker, watchers, self.timings)
        self._watching: dict[str, int] = {}  # player: subscriptions open here
        self._counted: set[str] = set()  # players the store counts this process for
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Connect the watchers and start the matchmaker and the heartbeat."""
        await self.watchers.start()
        self._loops = [
            asyncio.create_task(self.matchmaker.run()),
            asyncio.create_task(self._beat()),
        ]

    async def stop(self) -> None:
        """Stop the loops, give the lease up, and count this process's watchers out."""
        loops = [*self._loops, *self._tasks]
        for task in loops:
            task.cancel()
        await asyncio.gather(*loops, return_exceptions=True)
        await self.matchmaker.release()
        for player_id in list(self._counted):
            with contextlib.suppress(Exception):
                await self.watchers.unwatch(player_id)
        self._watching.clear()
        self._counted.clear()
        with contextlib.suppress(Exception):
            await self.watchers.close()

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(self.timings.heartbeat_seconds)
            try:
                await self.watchers.heartbeat(list(self._counted))
            except Exception:  # an outage: the next beat tries again
                log.warning("quick play: the watchers' heartbeat failed", exc_info=True)

    # ------------------------------------------------------------------ operations

    async def start_ticket(self, player: Player, rated: bool) -> QuickPlayTicket:
        """Start searching: ALREADY_SEATED for a player seated at an unfinished table; the
        same ticket, unchanged, for one already searching."""
        now = time.time()
        try:
            async with self.db.write() as session:
                if await seat_guard.seated_among(session, [player.id]):
                    raise RuleError(
                        ErrorCode.ALREADY_SEATED, "you sit at an unfinished table: play there"
                    )
                existing = await rows.searching_of(session, player.id)
                if existing is not None:
                    return QuickPlayTicket.of(existing)
                ticket_id = uuid.uuid4().hex
                await rows.insert_searching(session, ticket_id, player.id, rated, now)
        except IntegrityError:  # a second start of the same player committed first
            async with self.db.read() as session:
                existing = await rows.searching_of(session, player.id)
            if existing is None:
                raise
            return QuickPlayTicket.of(existing)
        ticket = QuickPlayTicket(ticket_id, player.id, TicketStatus.SEARCHING, rated, now)
        await announce(self.db, self.broker, [ticket])
        self.matchmaker.nudge()
        with contextlib.suppress(Exception):
            await self.broker.publish(NUDGE_CHANNEL, MatchmakingNudge())
        return ticket

    async def cancel(self, player: Player) -> QuickPlayTicket | None:
        """End the caller's SEARCHING ticket CANCELLED, unless a match got it first: the
        caller's latest ticket in its final state (None without any)."""
        return await self.cancel_searching(player.id)

    async def cancel_searching(self, player_id: str) -> QuickPlayTicket | None:
        """End the player's SEARCHING ticket CANCELLED, if any (a cancel, a ban: asked
        again, it changes nothing): their latest ticket in its final state."""
        now = time.time()
        async with self.db.write() as session:
            ended = await rows.end_searching(
                session, TicketStatus.CANCELLED, now, player_id=player_id
            )
            latest = await rows.latest_of(session, player_id)
        ticket = QuickPlayTicket.of(latest) if latest is not None else None
        if ended and ticket is not None:
            await announce(self.db, self.broker, [ticket])
        return ticket

    async def latest(self, player_id: str) -> QuickPlayTicket | None:
        """The player's latest ticket, if any."""
        async with self.db.read() as session:
            row = await rows.latest_of(session, player_id)
        return QuickPlayTicket.of(row) if row is not None else None

    async def searching(self) -> int:
        """How many tickets search now, on every process."""
        async with self.db.read() as session:
            return await rows.count_searching(session)

    # ------------------------------------------------------------------ the stream

    async def updates(self, player: Player) -> AsyncGenerator[QuickPlayTicket, None]:
        """The player's latest ticket (if any), then each change of their tickets. While
        it is open the player watches their tickets (which keeps a SEARCHING one)."""
        subscription = await self.broker.subscribe(ticket_channel(player.id))
        await self._watch(player.id)
        sent: dict[str, TicketStatus] = {}
        try:
            with subscription:
                latest = await self.latest(player.id)
                if latest is not None:
                    sent[latest.id] = latest.status
                    yield latest
                while True:
                    message = await subscription.get()
                    ticket = await self._news(message, player.id)
                    if ticket is None or not _is_new(ticket, sent):
                        continue
                    sent[ticket.id] = ticket.status
                    yield ticket
        finally:
            self._unwatch(player.id)

    async def _news(self, message: object, player_id: str) -> QuickPlayTicket | None:
        if isinstance(message, TicketChanged):
            return message.ticket
        if message is RESYNC:  # messages may have been lost: the latest is what counts
            return await self.latest(player_id)
        return None

    async def _watch(self, player_id: str) -> None:
        self._watching[player_id] = self._watching.get(player_id, 0) + 1
        if player_id in self._counted:
            return  # counted already (or still: its end is not counted out yet)
        self._counted.add(player_id)
        try:
            await self.watchers.watch(player_id)
        except Exception:
            log.warning("quick play: could not count a watcher", exc_info=True)

    def _unwatch(self, player_id: str) -> None:
        count = self._watching.get(player_id, 0) - 1
        if count > 0:
            self._watching[player_id] = count
            return
        self._watching.pop(player_id, None)
        task = asyncio.get_running_loop().create_task(self._uncount(player_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _uncount(self, player_id: str) -> None:
        if player_id in self._watching or player_id not in self._counted:
            return  # watching again already
        self._counted.discard(player_id)
        try:
            await self.watchers.unwatch(player_id)
        except Exception:  # Redis is away: this process's entries lapse with its heartbeat
            log.warning("quick play: could not count a watcher out", exc_info=True)


def _is_new(ticket: QuickPlayTicket, sent: dict[str, TicketStatus]) -> bool:
    """A state of a ticket not sent yet (a ticket's states only move forward)."""
    before = sent.get(ticket.id)
    return before is None or (not before.final and ticket.status is not before)
