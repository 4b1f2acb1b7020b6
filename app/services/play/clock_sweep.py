"""The per-process turn-clock timer: one heap of deadlines and one task, never a task or
a query per table per second.

Deadlines live in the database (`tables.turn_deadline`, indexed, written by the
compare-and-swap of the change that started the turn). Each process keeps a
heap of the deadlines it set itself and sleeps until the earliest; a periodic
indexed query for overdue ones covers deadlines set by a process that died
(or before a restart). Firing is a ledger change decided on the table as it
stands, so a deadline fired twice (two processes, a late human move) applies
once.
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import logging
import random
import time
from collections.abc import Callable

from app.services.play.clock import expire
from app.services.tables.change import Change
from app.services.tables.deadlines import bot_on_turn
from app.services.tables.events import GameEvent
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot
from app.store.db import Database
from app.store.table_rows import due_deadlines

log = logging.getLogger(__name__)

# A deadline this process armed is left to its heap; the sweep takes those overdue by
# more than this (armed by a process that died, or lost here).
SWEEP_GRACE_SECONDS = 1.0
MAX_STEPS = 8  # timeout, reveal, bid: a few steps per firing at most


class ClockTimers:
    """Fires the turn clocks of every table this process changed, and overdue ones."""

    def __init__(
        self,
        ledger: Ledger,
        db: Database,
        sweep_seconds: float = 1.0,
        stalled: Callable[[str], None] | None = None,
    ) -> None:
        self.ledger = ledger
        self.db = db
        self.sweep_seconds = sweep_seconds
        # Called with a table whose bot owes a move nobody made (its watchdog passed).
        self.stalled = stalled
        self._heap: list[tuple[float, str]] = []
        self._armed: dict[str, float] = {}  # the current deadline per table (lazy heap deletion)
        self._firing: dict[str, asyncio.Task[None]] = {}
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._rng = random.SystemRandom()
        self._settling = False  # the process is going away: fire nothing new
        self.fired = 0  # TURN_TIMED_OUT changes this process made (tests, benchmarks)
        self.lateness: list[float] = []  # seconds between a deadline and its firing

    # ------------------------------------------------------------------ arming

    def arm(self, table: TableSnapshot) -> None:
        """Remember `table`'s deadline (replacing any earlier one of that table)."""
        deadline = table.turn_deadline if table.clock_seat is not None else None
        if deadline is None:
            self._armed.pop(table.id, None)
            return
        if self._armed.get(table.id) == deadline:
            return
        self._armed[table.id] = deadline
        heapq.heappush(self._heap, (deadline, table.id))
        if self._heap[0] == (deadline, table.id):
            self._wake.set()

    @property
    def armed(self) -> int:
        """How many tables have a deadline armed here."""
        return len(self._armed)

    # ------------------------------------------------------------------ running

    async def start(self) -> None:
        """Play for every overdue turn at once, then run the timer and the sweep."""
        await self.sweep(grace=0.0)
        self._tasks = [
            asyncio.create_task(self._timer()),
            asyncio.create_task(self._sweep_forever()),
        ]

    async def settle(self, timeout: float) -> None:
        """Stop the timer and the sweep, and give the firings under way up to `timeout`
        seconds to finish (the deadlines left are in the database: another process's
        sweep, or this one's after a restart, fires them)."""
        self._settling = True
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []
        if self._firing:
            await asyncio.wait(list(self._firing.values()), timeout=timeout)

    async def stop(self) -> None:
        """Stop the timer, the sweep and any firing in progress."""
        tasks = [*self._tasks, *self._firing.values()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._tasks = []
        self._firing.clear()

    async def idle(self) -> None:
        """Wait until no firing is in progress (tests)."""
        while self._firing:
            await asyncio.gather(*self._firing.values(), return_exceptions=True)

    async def _timer(self) -> None:
        while True:
            self._wake.clear()
            now = time.time()
            while self._heap and self._heap[0][0] <= now:
                deadline, table_id = heapq.heappop(self._heap)
                if self._armed.get(table_id) != deadline:
                    continue  # superseded by a later change of that table
                del self._armed[table_id]
                self.fire(table_id, deadline)
            timeout = self._heap[0][0] - now if self._heap else None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout)

    async def _sweep_forever(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_seconds)
            try:
                await self.sweep()
            except Exception:  # a database hiccup: the next sweep tries again
                log.warning("clock sweep failed", exc_info=True)

    async def sweep(self, grace: float = SWEEP_GRACE_SECONDS) -> None:
        """Fire every deadline overdue by more than `grace`, and wake the bots whose
        watchdog passed (the process driving them may have died): one indexed query."""
        now = time.time()
        async with self.db.read() as session:
            overdue = await due_deadlines(session, now - grace)
        for table_id, deadline in overdue:
            if table_id in self._firing:
                continue
            table = self.ledger.cached_any(table_id) or await self.ledger.get(table_id)
            if table is not None and bot_on_turn(table):
                if self.stalled is not None:
                    self.stalled(table_id)
                continue
            self.fire(table_id, deadline)

    def fire(self, table_id: str, deadline: float) -> None:
        """Play for the seat on turn at `table_id` if its clock has really run out."""
        if table_id in self._firing or self._settling:
            return
        self._firing[table_id] = asyncio.create_task(self._fire(table_id, deadline))

    def _expire(self, table: TableSnapshot) -> Change:
        # Decided at the moment of the write, on the table as it stands.
        return expire(table, time.time(), self._rng)

    async def _fire(self, table_id: str, deadline: float) -> None:
        try:
            for _ in range(MAX_STEPS):
                change, _ = await self.ledger.change(table_id, self._expire)
                if not change.steps:
                    return
                if change.steps[0].event is GameEvent.TURN_TIMED_OUT:
                    self.fired += 1
                    self.lateness.append(time.time() - deadline)
                    if len(self.lateness) > 100_000:
                        del self.lateness[:50_000]
        except asyncio.CancelledError:
            raise
        except Exception:
            # Lost to a racing move or an outage: the table's own later change re-arms it,
            # and the sweep finds it if it is still overdue.
            log.warning("turn clock of table %s could not fire", table_id, exc_info=True)
        finally:
            self._firing.pop(table_id, None)
