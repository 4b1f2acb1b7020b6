"""Bots at the table: whose turn it is, the move each level makes, and the driver that
plays bot turns server-side, one change at a time."""

from __future__ import annotations

import asyncio
import logging
import random

from app.rules.bots import SeatKnowledge, basic_move, decide
from app.rules.levels import BotLevel
from app.rules.moves import Move
from app.rules.seats import Seat
from app.services.play.expert_pool import ExpertPool
from app.services.play.moves import apply_move
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot, TableStatus

log = logging.getLogger(__name__)

MAX_BOT_FAILURES = 8
_EXPERT = BotLevel.EXPERT


def bot_to_move(table: TableSnapshot) -> Seat | None:
    """The bot seat that has to act now, if any."""
    game = table.game
    if table.status is not TableStatus.PLAYING or game is None:
        return None
    seat = game.turn
    if seat is None:
        return None
    occupant = table.occupants[seat]
    return seat if occupant is not None and occupant.is_bot else None


def bot_level(table: TableSnapshot, seat: Seat) -> BotLevel:
    """The level of the bot in `seat` (BASIC for a bot stored without one)."""
    occupant = table.occupants[seat]
    level = occupant.bot_level if occupant is not None else None
    return level if level is not None else BotLevel.BASIC


def bot_move(table: TableSnapshot, seat: Seat, rng: random.Random) -> Move:
    """The move of the bot in `seat`, by its level. BASIC is the rulebook's bot exactly;
    the other levels decide from the seat's knowledge only."""
    assert table.game is not None
    level = bot_level(table, seat)
    if level is BotLevel.BASIC:
        return basic_move(table.game, seat, rng)
    return decide(level, SeatKnowledge.of(table.game, seat), rng)


def bot_rng(table: TableSnapshot, fallback: random.Random) -> random.Random:
    """The random numbers of a bot's move: at a table dealt from an explicit seed (tests,
    tournaments) a stream derived from that seed and the version, so the same human moves
    meet the same bot moves every time; elsewhere `fallback` (unpredictable)."""
    if table.deal_seed is None:
        return fallback
    return random.Random(f"{table.deal_seed}:{table.version}")


class BotDriver:
    """Plays bot turns server-side, one move (one update) at a time, per table.

    Each bot move is decided inside the ledger's transaction on the current
    table, so a bot never acts on a stale state, and a second driver (another
    process) that raced it finds nothing left to do. An EXPERT move is thought
    out off the event loop (`experts`) on the table as read, and applied inside
    the ledger's change only if the table is still at that version.
    """

    def __init__(
        self, ledger: Ledger, delay_ms: int = 0, experts: ExpertPool | None = None
    ) -> None:
        self.ledger = ledger
        self.delay = delay_ms / 1000
        self.experts = experts if experts is not None else ExpertPool(1, 50)
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._again: set[str] = set()
        self._rng = random.SystemRandom()
        self._settling = False  # the process is going away: start no new bot turn

    @property
    def running(self) -> frozenset[str]:
        """Tables whose bots are being driven by this process right now."""
        return frozenset(self._tasks)

    def kick(self, table_id: str) -> None:
        """Make sure bots get to move on `table_id` if it is their turn."""
        if self._settling:
            return  # another process's clock sweep finds the turn (its watchdog)
        if table_id in self._tasks:
            self._again.add(table_id)
            return
        self._tasks[table_id] = asyncio.create_task(self._run(table_id))

    async def _run(self, table_id: str) -> None:
        failures = 0
        try:
            while True:
                self._again.discard(table_id)
                try:
                    while not self._settling and await self._step(table_id):
                        failures = 0
                except asyncio.CancelledError:
                    raise
                except Exception:  # a database hiccup must not stall the table for good
                    failures += 1
                    log.exception("bot move failed on table %s (attempt %d)", table_id, failures)
                    if failures >= MAX_BOT_FAILURES or self._settling:
                        return
                    await asyncio.sleep(min(5.0, 0.1 * 2**failures))
                    self._again.add(table_id)
                if table_id not in self._again or self._settling:
                    return
        finally:
            self._tasks.pop(table_id, None)

    async def _step(self, table_id: str) -> bool:
        table = await self.ledger.get(table_id)
        if table is None or bot_to_move(table) is None:
            return False
        if self.delay:
            await asyncio.sleep(self.delay)
        seat = bot_to_move(table)
        if seat is not None and table.game is not None and bot_level(table, seat) is _EXPERT:
            return await self._expert_step(table, seat)

        def decide(current: TableSnapshot) -> Change:
            seat = bot_to_move(current)
            if seat is None or current.game is None:
                return Change()
            return apply_move(current, bot_move(current, seat, bot_rng(current, self._rng)))

        change, _ = await self.ledger.change(table_id, decide)
        return bool(change.steps)

    async def _expert_step(self, table: TableSnapshot, seat: Seat) -> bool:
        """Think off the loop on `table` as read; apply the move only on that version.
        Returns True when the table moved on (by this move or another), so the driver
        looks again."""
        assert table.game is not None
        move = await self.experts.decide(SeatKnowledge.of(table.game, seat))
        version = table.version

        def decide(current: TableSnapshot) -> Change:
            if current.version != version or bot_to_move(current) is not seat:
                return Change()  # computed for a table that is gone: think again, or not
            return apply_move(current, move)

        change, after = await self.ledger.change(table.id, decide)
        return bool(change.steps) or after.version != version

    async def idle(self) -> None:
        """Wait until no bot is moving (tests and shutdown)."""
        while self._tasks:
            await asyncio.gather(*self._tasks.values(), return_exceptions=True)

    async def settle(self, timeout: float) -> None:
        """Start no new bot turn, and give the moves under way up to `timeout` seconds to
        be committed and published (the turns left have a watchdog: the clock sweep of
        another process, or of this one after a restart, drives them)."""
        self._settling = True
        if self._tasks:
            await asyncio.wait(list(self._tasks.values()), timeout=timeout)

    async def stop(self) -> None:
        """Cancel every running driver."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
        self.experts.close()
