"""The matchmaker: whichever process holds the matchmaking lease runs a wave every
second (sooner after a ticket starts): it expires the tickets nobody watched for 10 s,
hands the rest to the pure matcher (app/rules/matchmaking.py), and opens each table it
answers in a transaction of its own.

A match's transaction checks that this process still holds the lease (the fence),
locks the four players against being seated elsewhere (app/store/seat_guard.py) and
finds none of them seated at an unfinished table, stores the table with its game
started, and ends the tickets MATCHED only if all of them are still SEARCHING; else
nothing of it is written and its tickets wait for the next wave. A process that dies
mid-wave leaves each match written whole or not at all; the next holder (once the
lease lapsed, within `lease_seconds` plus a wave) serves the tickets left, and
publishes the ends nobody published.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.broker.base import Broker
from app.rules.matchmaking import Match, MatchPolicy, Ticket, TicketStatus, match_tickets
from app.services.quickplay.announce import announce, mark_announced, publish
from app.services.quickplay.model import (
    NUDGE_CHANNEL,
    UNWATCHED_SECONDS,
    QuickPlayTicket,
)
from app.services.quickplay.tables import quick_play_table, store_table
from app.services.quickplay.watchers import WatchStore
from app.services.tables.ledger import Ledger
from app.store import leases, seat_guard
from app.store import tickets as rows
from app.store.db import Database

log = logging.getLogger(__name__)

LEASE = "matchmaker"
OPENING_AT_ONCE = 8  # matches of one wave written concurrently (PostgreSQL)
REPUBLISH_AFTER = 2.0  # an end left unannounced this long is published again


@dataclass(frozen=True, slots=True)
class QuickPlayTimings:
    """How often things happen (settings, so tests and benchmarks can change them)."""

    bot_seconds: float = 15.0
    wave_seconds: float = 1.0
    lease_seconds: float = 3.0
    heartbeat_seconds: float = 5.0


class LeaseLost(Exception):
    """Another process took the matchmaking lease over: this wave stops."""


class _Refused(Exception):
    """A match that cannot be written (a ticket ended meanwhile, a player sat down)."""


@dataclass
class WaveReport:
    """What one wave did (tests and the load test read it)."""

    searching: int = 0
    expired: int = 0
    opened: int = 0
    refused: int = 0
    matcher_seconds: float = 0.0


class Matchmaker:
    """Holds (or waits for) the matchmaking lease and runs the waves while holding it."""

    def __init__(
        self,
        db: Database,
        ledger: Ledger,
        broker: Broker[Any],
        watchers: WatchStore,
        timings: QuickPlayTimings,
    ) -> None:
        self.db = db
        self.ledger = ledger
        self.broker = broker
        self.watchers = watchers
        self.timings = timings
        self.policy = MatchPolicy(bot_seconds=timings.bot_seconds)
        self.holder = uuid.uuid4().hex
        self.epoch: int | None = None
        self.last_wave: WaveReport | None = None
        self._lost = False  # the renewal beside a wave found the lease gone
        self._nudged = asyncio.Event()

    def nudge(self) -> None:
        """A ticket started: run the next wave soon."""
        self._nudged.set()

    async def run(self) -> None:
        """Take or renew the lease once a wave, and run the wave while holding it."""
        nudges = await self.broker.subscribe(NUDGE_CHANNEL)
        nudges.listen(lambda _message: self._nudged.set())
        with nudges:
            while True:
                await self._pause()
                try:
                    self.epoch = await self._claim()
                    if self.epoch is not None:
                        self.last_wave = await self._renewing(self.epoch)
                except LeaseLost:
                    self.epoch = None
                except Exception:  # an outage: the next wave tries again
                    log.warning("quick play: a matchmaking wave failed", exc_info=True)

    async def _pause(self) -> None:
        """Until the next wave: a wave's time, or a nudge (but a quarter of it at least,
        so that a burst of starts is matched in a few waves, not one per start)."""
        await asyncio.sleep(self.timings.wave_seconds / 4)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._nudged.wait(), self.timings.wave_seconds * 3 / 4)
        self._nudged.clear()

    async def release(self) -> None:
        """Give the lease up (this process stops): another takes over at its next wave."""
        if self.epoch is None:
            return
        with contextlib.suppress(Exception):
            async with self.db.write() as session:
                await leases.release(session, LEASE, self.holder)
        self.epoch = None

    async def _claim(self) -> int | None:
        """Renew or take the lease: the epoch held, or None. A process that does not hold
        it only reads, while the holder's lease runs."""
        if self.epoch is None:
            async with self.db.read() as session:
                held = await leases.holder_of(session, LEASE)
            if held is not None and held[0] != self.holder and held[1] >= time.time():
                return None
        async with self.db.write() as session:
            return await leases.claim(
                session, LEASE, self.holder, time.time(), self.timings.lease_seconds
            )

    async def _renewing(self, epoch: int) -> WaveReport:
        """A wave, the lease renewed beside it every third of its time: a wave slower
        than the lease (a crowded database) keeps it."""
        self._lost = False

        async def renew() -> None:
            while True:
                await asyncio.sleep(self.timings.lease_seconds / 3)
                if await self._claim() != epoch:
                    self._lost = True
                    return

        renewal = asyncio.create_task(renew())
        try:
            return await self.wave(epoch)
        finally:
            renewal.cancel()
            await asyncio.gather(renewal, return_exceptions=True)

    # ------------------------------------------------------------------ one wave

    async def wave(self, epoch: int) -> WaveReport:
        """Expire, match and open tables; publish the ends nobody published."""
        now = time.time()
        async with self.db.read() as session:
            searching = await rows.searching(session)
            blocks = await rows.blocks_among_searching(session) if searching else []
        report = WaveReport(searching=len(searching))
        expired = await self._expire(searching, now, epoch)
        report.expired = len(expired)
        tickets = [
            Ticket(s.row.id, s.row.player_id, s.row.rated, s.row.started_at, s.rating)
            for s in searching
            if not s.seated and s.row.id not in expired
        ]
        started = time.perf_counter()
        matches = match_tickets(tickets, blocks, now, self.policy)
        report.matcher_seconds = time.perf_counter() - started
        names = {s.row.player_id: s.username for s in searching}
        published: list[str] = []
        try:
            for first in range(0, len(matches), OPENING_AT_ONCE):
                if self._lost:
                    raise LeaseLost
                batch = matches[first : first + OPENING_AT_ONCE]
                for opened in await asyncio.gather(*(self._open(m, names, epoch) for m in batch)):
                    report.opened += opened is not None
                    report.refused += opened is None
                    published += opened or []
        finally:  # one write for the wave's matched tickets, whatever stopped it
            await mark_announced(self.db, published)
        await self._republish(now)
        log.debug("quick play wave: %s in %.3f s", report, time.time() - now)
        return report

    async def _expire(
        self, searching: Sequence[rows.Searching], now: float, epoch: int
    ) -> set[str]:
        """End EXPIRED the tickets whose owner has not watched them for 10 s (counted
        from the later of the start and the end of the owner's last subscription)."""
        since = await self.watchers.unwatched_since({s.row.player_id for s in searching})
        due = []
        for entry in searching:
            unwatched = since.get(entry.row.player_id)
            if unwatched is not None and now >= max(entry.row.started_at, unwatched) + (
                UNWATCHED_SECONDS
            ):
                due.append(entry.row.id)
        if not due:
            return set()
        async with self.db.write() as session:
            if not await leases.still_held(session, LEASE, self.holder, epoch):
                raise LeaseLost
            await rows.end_searching(session, TicketStatus.EXPIRED, now, ticket_ids=due)
            ended = [
                QuickPlayTicket.of(r)
                for r in await rows.by_ids(session, due)
                if r.status == TicketStatus.EXPIRED and r.ended_at == now
            ]
        await announce(self.db, self.broker, ended)
        return {t.id for t in ended}

    async def _open(self, match: Match, names: dict[str, str], epoch: int) -> list[str] | None:
        """Write one match (whole or not at all); then announce its table and publish its
        tickets: the ids of those published (None: not written)."""
        now = time.time()
        table = quick_play_table(match, names, now, self.ledger.clock_scale)
        ids = [t.id for t in match.tickets]
        try:
            async with self.db.write() as session:
                if not await leases.still_held(session, LEASE, self.holder, epoch):
                    raise LeaseLost
                if await seat_guard.claim_players(session, [t.player_id for t in match.tickets]):
                    raise _Refused
                await store_table(session, table)
                ended = await rows.end_searching(
                    session, TicketStatus.MATCHED, now, ticket_ids=ids, table_id=table.id
                )
                if ended != len(ids):
                    raise _Refused
        except _Refused:
            return None
        await self.ledger.announce(table)
        self.ledger.opened(table)  # its reactions: bots to drive, its clock to arm
        matched = [
            QuickPlayTicket(
                id=t.id,
                player_id=t.player_id,
                status=TicketStatus.MATCHED,
                rated=t.rated,
                started_at=t.started_at,
                ended_at=now,
                table_id=table.id,
            )
            for t in match.tickets
        ]
        return [t.id for t in matched] if await publish(self.broker, matched) else []

    async def _republish(self, now: float) -> None:
        async with self.db.read() as session:
            left = await rows.unannounced(session, now - REPUBLISH_AFTER)
        if left:
            await announce(self.db, self.broker, [QuickPlayTicket.of(r) for r in left])
