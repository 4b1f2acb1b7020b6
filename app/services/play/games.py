"""Game commands (reveal, bid, pass, play) and the bots that answer them."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Callable

from app.rules.bots import SeatKnowledge, basic_move, decide
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Phase
from app.rules.levels import BotLevel
from app.rules.movelog import move_entry
from app.rules.moves import Move
from app.rules.seats import Seat
from app.services.accounts.auth import Player
from app.services.play.clock import reset_timeouts
from app.services.play.expert_pool import ExpertPool
from app.services.social.service import SocialService
from app.services.tables.change import Change
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.ledger import Ledger
from app.services.tables.service import TableService, plausible_id
from app.services.tables.snapshot import TableSnapshot, TableStatus, now_ts

log = logging.getLogger(__name__)

# Events after which the lobby's copy of a table (scores, phase) is stale.
LOBBY_WORTHY = frozenset({GameEvent.HAND_SCORED, GameEvent.GAME_OVER})
MAX_BOT_FAILURES = 8
_EXPERT = BotLevel.EXPERT


def apply_move(table: TableSnapshot, move: Move) -> Change:
    """The change one engine move makes to a table: one step per event it caused."""
    if table.game is None:
        raise RuleError(ErrorCode.WRONG_PHASE, "the game has not started")
    if table.status is TableStatus.CLOSED:
        raise RuleError(ErrorCode.WRONG_PHASE, "the table is closed")
    game = table.game.copy()
    steps = game.apply_steps(move)
    change = Change()
    version = table.version
    for step in steps:
        version += 1
        over = step.state.phase is Phase.GAME_OVER
        status = TableStatus.FINISHED if over else table.status
        event = GameEvent.of(step.event.kind)
        # When the game ended starts the rematch window (RULES.md, Rematch).
        finished_at = now_ts() if over else table.finished_at
        change.add(
            event,
            table.evolve(game=step.state, version=version, status=status, finished_at=finished_at),
            step.event.seat,
        )
        if event in LOBBY_WORTHY:
            change.lobby_event = LobbyEvent.TABLE_REMOVED if over else LobbyEvent.TABLE_UPDATED
    change.log_entry(table.version + 1, len(steps), move_entry(move))
    return change


class _NotSeated(Exception):
    """The caller has no seat at the table (decided inside the transaction)."""


class GameService:
    """Checks who may act, applies moves through the ledger, and wakes the bots."""

    def __init__(
        self, ledger: Ledger, tables: TableService, social: SocialService, bots: BotDriver
    ) -> None:
        self.ledger = ledger
        self.tables = tables
        self.social = social
        self.bots = bots

    async def act(
        self,
        player: Player,
        table_id: str,
        build: Callable[[Seat], Move],
        expected_version: int | None = None,
    ) -> TableSnapshot:
        """Apply the move `build(seat)` for the caller's seat; returns the table after it.

        A seated player needs no social lookups (the hot path); for anyone else the
        answer is NOT_FOUND or FORBIDDEN, as the table's visibility decides.
        """
        if not plausible_id(table_id):
            raise RuleError(ErrorCode.NOT_FOUND, "no such table")

        def decide(table: TableSnapshot) -> Change:
            seat = table.seat_of(player.id)
            if seat is None:
                raise _NotSeated()
            move = build(seat)
            if table.timed_out is seat:
                # The clock ran out first: the server is playing this turn for the seat.
                raise RuleError(ErrorCode.NOT_YOUR_TURN, "your time ran out for this turn")
            change = apply_move(table, move)
            reset_timeouts(change, seat)
            return change

        try:
            _, after = await self.ledger.change(table_id, decide, expected_version)
        except _NotSeated:
            viewer = await self.social.viewer(player)
            self.tables.visible(viewer, await self.ledger.get(table_id))
            raise RuleError(ErrorCode.FORBIDDEN, "only seated players make moves") from None
        return after


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

    @property
    def running(self) -> frozenset[str]:
        """Tables whose bots are being driven by this process right now."""
        return frozenset(self._tasks)

    def react(self, change: Change, after: TableSnapshot) -> None:
        """The ledger's reactor: wake the bots when one of them is to move."""
        if bot_to_move(after) is not None:
            self.kick(after.id)

    def kick(self, table_id: str) -> None:
        """Make sure bots get to move on `table_id` if it is their turn."""
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
                    while await self._step(table_id):
                        failures = 0
                except asyncio.CancelledError:
                    raise
                except Exception:  # a database hiccup must not stall the table for good
                    failures += 1
                    log.exception("bot move failed on table %s (attempt %d)", table_id, failures)
                    if failures >= MAX_BOT_FAILURES:
                        return
                    await asyncio.sleep(min(5.0, 0.1 * 2**failures))
                    self._again.add(table_id)
                if table_id not in self._again:
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

    async def stop(self) -> None:
        """Cancel every running driver."""
        for task in self._tasks.values():
            task.cancel()
        await asyncio.gather(*self._tasks.values(), return_exceptions=True)
        self._tasks.clear()
        self.experts.close()
