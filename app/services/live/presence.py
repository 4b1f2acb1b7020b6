"""Presence: which seated humans are connected, their absence, and idle tables.

A player is connected to a table while one of their `gameUpdates` subscriptions
to it is live on any process (`PresenceStore` counts processes). The last
subscription ending starts a grace period: a new one within it (a page reload)
shows no change at all; after it, the player is disconnected and the change is
published on the table's presence channel (never a game version). A player
disconnected for `reconnect_seconds` while the game is in progress is replaced
by a bot and becomes the seat's away player; a WAITING table none of whose
seated humans has been connected for `idle_seconds` closes.

The reconnect window's end is armed on the process that saw the disconnection, and
also indexed in the store: every process sweeps the index for overdue ones, so a
replacement is not lost with a process that died (or restarted). Without Redis the
index lives in the process: at start-up the seated humans of games in progress count
as disconnected since the start, so the window runs from the restart. Replacing is a
ledger change decided on the table as it stands, so two processes replace once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from dataclasses import dataclass
from typing import Any

from app.broker.base import Broker
from app.rules.errors import ErrorCode, RuleError
from app.rules.seats import SEATS, Seat
from app.services.live.presence_store import Mark, PresenceStore
from app.services.lobby.service import close_table
from app.services.play.clock import replace_absent
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot, TableStatus
from app.store.db import Database
from app.store.table_rows import idle_waiting_tables

log = logging.getLogger(__name__)


def presence_channel(table_id: str) -> str:
    """The broker channel of one table's presence changes."""
    return f"presence:{table_id}"


@dataclass(frozen=True, slots=True)
class PresenceMessage:
    """A player's presence at a table changed (the broker carries it)."""

    table_id: str
    player_id: str
    connected: bool
    changed_at: float


@dataclass(frozen=True, slots=True)
class SeatPresence:
    """One seat's presence: bots are always connected, empty seats never."""

    seat: Seat
    player_id: str | None
    connected: bool
    changed_at: float


@dataclass(frozen=True, slots=True)
class PresenceTimings:
    """How long things take (settings, so tests can shorten them)."""

    grace: float = 3.5
    heartbeat: float = 5.0
    reconnect: float = 60.0
    idle: float = 600.0


class PresenceService:
    """Counts this process's subscriptions and keeps the shared presence up to date."""

    def __init__(
        self,
        store: PresenceStore,
        broker: Broker[Any],
        ledger: Ledger,
        db: Database,
        timings: PresenceTimings | None = None,
    ) -> None:
        self.store = store
        self.broker = broker
        self.ledger = ledger
        self.db = db
        self.timings = timings or PresenceTimings()
        self._local: dict[tuple[str, str], int] = {}
        self._leaving: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._replacing: dict[tuple[str, str], asyncio.TimerHandle] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._loops: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------------ lifecycle

    async def start(self, open_tables: list[TableSnapshot] | None = None) -> None:
        """Connect the store and tell it which humans sit at games in progress (a store
        in memory lost who was connected: see `PresenceStore.restarted`), then beat the
        heart, look for idle tables and for players past the reconnect window."""
        await self.store.start()
        seated = [
            (table.id, occupant.player_id)
            for table in open_tables or []
            if table.status is TableStatus.PLAYING
            for occupant in table.occupants
            if occupant is not None and not occupant.is_bot
        ]
        await self.store.restarted(seated, time.time())
        self._loops = [
            asyncio.create_task(self._every(self.timings.heartbeat, self.heartbeat)),
            asyncio.create_task(
                self._every(min(30.0, max(0.2, self.timings.idle / 4)), self.close_idle)
            ),
            asyncio.create_task(
                self._every(
                    min(self.timings.heartbeat, max(0.2, self.timings.reconnect / 4)),
                    self.replace_overdue,
                )
            ),
        ]

    async def settle(self, timeout: float) -> None:
        """At the end of a drain, with a shared store: wait (up to `timeout`) for the
        players whose sockets were just closed to come back on another process within
        their grace period, so that a restart shows no disconnection; those who do not
        are disconnected as usual. A store in this process dies with it: nothing to wait
        for."""
        if not self.store.shared:
            return
        deadline = time.monotonic() + timeout
        while (self._leaving or self._tasks) and time.monotonic() < deadline:
            await asyncio.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    async def stop(self) -> None:
        """Stop the loops and timers; the players held here count as gone at once (a
        killed process's are reaped by the others once its heartbeat lapses)."""
        for handle in [*self._leaving.values(), *self._replacing.values()]:
            handle.cancel()
        held = [key for key, count in self._local.items() if count] + list(self._leaving)
        self._local.clear()
        self._leaving.clear()
        for table_id, player_id in held:
            with contextlib.suppress(Exception):
                mark = await self.store.disconnect(table_id, player_id)
                if mark is not None:
                    message = PresenceMessage(table_id, player_id, False, mark.changed_at)
                    await self.broker.publish(presence_channel(table_id), message)
        tasks = [*self._loops, *self._tasks]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        with contextlib.suppress(Exception):
            await self.store.close()

    async def _every(self, seconds: float, job: Any) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await job()
            except Exception:  # an outage: the next round tries again
                log.warning("presence job %s failed", job.__name__, exc_info=True)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ subscriptions

    async def enter(self, table_id: str, player_id: str) -> None:
        """A `gameUpdates` subscription of the player to the table started here."""
        key = (table_id, player_id)
        count = self._local.get(key, 0)
        self._local[key] = count + 1
        if count:
            return
        leaving = self._leaving.pop(key, None)
        if leaving is not None:
            leaving.cancel()  # back within the grace period: nothing changed
            return
        try:
            mark = await self.store.connect(table_id, player_id)
        except Exception:
            log.warning("presence: could not count a connection", exc_info=True)
            return
        if mark is not None:
            await self._announce(table_id, player_id, mark)

    def leave(self, table_id: str, player_id: str, absent: bool = True) -> None:
        """A subscription ended; after the grace period without another, the player is
        disconnected here. `absent=False`: they no longer play at the table (they left,
        or it closed), so nobody will have to take their seat: no reconnect window."""
        key = (table_id, player_id)
        count = self._local.get(key, 0) - 1
        if count > 0:
            self._local[key] = count
            return
        self._local.pop(key, None)
        loop = asyncio.get_running_loop()
        self._leaving[key] = loop.call_later(
            self.timings.grace, lambda: self._spawn(self._gone(key, absent))
        )

    async def _gone(self, key: tuple[str, str], absent: bool = True) -> None:
        self._leaving.pop(key, None)
        if self._local.get(key):
            return
        try:
            mark = await self.store.disconnect(*key)
            if mark is not None and not absent:
                await self.store.settle(*key, mark.changed_at)
        except Exception:  # Redis is away: its heartbeat lapses, and others reap it
            log.warning("presence: could not count a disconnection", exc_info=True)
            return
        if mark is not None:
            await self._announce(*key, mark, absent)

    async def heartbeat(self) -> None:
        """Say this process is alive; announce the players of dead processes gone."""
        held = {key for key, count in self._local.items() if count} | set(self._leaving)
        for table_id, player_id, mark in await self.store.heartbeat(held):
            await self._announce(table_id, player_id, mark)

    async def _announce(
        self, table_id: str, player_id: str, mark: Mark, absent: bool = True
    ) -> None:
        message = PresenceMessage(table_id, player_id, mark.connected, mark.changed_at)
        try:
            await self.broker.publish(presence_channel(table_id), message)
        except Exception:
            log.warning("presence: could not publish a change", exc_info=True)
        key = (table_id, player_id)
        pending = self._replacing.pop(key, None)
        if pending is not None:
            pending.cancel()
        if absent and not mark.connected:
            loop = asyncio.get_running_loop()
            since = mark.changed_at
            self._replacing[key] = loop.call_later(
                self.timings.reconnect, lambda: self._spawn(self._replace_armed(key, since))
            )

    # ------------------------------------------------------------------ reading

    async def seats(self, table: TableSnapshot) -> list[SeatPresence]:
        """The four seats' presence, NORTH..WEST."""
        marks = await self.store.marks(table.id)
        return [seat_presence(table, seat, marks) for seat in SEATS]

    # ------------------------------------------------------------------ consequences

    async def _replace_armed(self, key: tuple[str, str], since: float) -> None:
        self._replacing.pop(key, None)
        await self._replace(key, since)

    async def replace_overdue(self) -> None:
        """Replace the players of any process whose reconnect window has passed (the
        process that armed it may have died): one indexed look-up."""
        cutoff = time.time() - self.timings.reconnect
        for table_id, player_id, since in await self.store.absent_before(cutoff):
            await self._replace((table_id, player_id), since)

    async def _replace(self, key: tuple[str, str], since: float) -> None:
        """The player has been disconnected since `since` for the reconnect window: a bot
        takes their seat if the game is still in progress (decided on the table as it
        stands, so a second process's attempt changes nothing). Then the disconnection
        is settled: whatever it led to, it is not looked at again."""
        table_id, player_id = key
        mark = (await self.store.marks(table_id)).get(player_id)
        if mark is None or mark.connected or mark.changed_at != since:
            # Back since, or disconnected again later (a later window counts: settling
            # drops only the entry of `since`).
            await self.store.settle(table_id, player_id, since)
            return

        def decide(table: TableSnapshot) -> Change:
            seat = table.seat_of(player_id)
            game = table.game
            change = Change()
            if seat is None or table.status is not TableStatus.PLAYING or game is None:
                return change
            replace_absent(table.evolve(timed_out=None), seat, change)
            return change

        try:
            await self.ledger.change(table_id, decide)
        except Exception as error:
            # A table that is gone (a database restored or recreated under a Redis that
            # remembers it) has nothing to replace, ever; anything else, the sweep tries
            # again: the disconnection is still indexed.
            if not (isinstance(error, RuleError) and error.code is ErrorCode.NOT_FOUND):
                log.warning("presence: could not replace an absent player", exc_info=True)
                return
        await self.store.settle(table_id, player_id, since)

    async def close_idle(self) -> None:
        """Close the WAITING tables none of whose seated humans has been connected for
        the idle time (one indexed query; racing processes close a table once)."""
        cutoff = time.time() - self.timings.idle
        async with self.db.read() as session:
            candidates = await idle_waiting_tables(session, cutoff)
        for table_id in candidates:
            table = await self.ledger.get(table_id)
            if table is None or table.status is not TableStatus.WAITING:
                continue
            marks = await self.store.marks(table_id)
            if any(_recently_connected(table, seat, marks, cutoff) for seat in SEATS):
                continue
            version = table.version

            def decide(current: TableSnapshot, version: int = version) -> Change:
                change = Change()
                if current.status is TableStatus.WAITING and current.version == version:
                    close_table(current, change)
                return change

            await self.ledger.change(table_id, decide)


def _recently_connected(
    table: TableSnapshot, seat: Seat, marks: dict[str, Mark], cutoff: float
) -> bool:
    occupant = table.occupants[seat]
    if occupant is None or occupant.is_bot:
        return False
    mark = marks.get(occupant.player_id)
    return mark is not None and (mark.connected or mark.changed_at > cutoff)


def seat_presence(table: TableSnapshot, seat: Seat, marks: dict[str, Mark]) -> SeatPresence:
    """One seat's presence from the marks of the table's players."""
    occupant = table.occupants[seat]
    if occupant is None:
        return SeatPresence(seat, None, False, table.created_at)
    if occupant.is_bot:
        return SeatPresence(seat, occupant.player_id, True, table.created_at)
    mark = marks.get(occupant.player_id)
    if mark is None:
        return SeatPresence(seat, occupant.player_id, False, table.created_at)
    return SeatPresence(seat, occupant.player_id, mark.connected, mark.changed_at)
