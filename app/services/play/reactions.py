"""What the server does once a change of a table is committed, in one place, as lila's
round actor owns a game's side effects: a bot whose turn it is gets driven, and the
table's turn clock is armed (or disarmed).

The ledger calls `committed` after every change this process commits (moves, seats,
clocks, presence, rematches). The same rule for bots also runs where no change was
committed here: at start-up, for turns owed before a restart (`resume`), and when the
clock sweep finds a bot turn whose watchdog passed, because the process that should have
driven it died (`bot_stalled`)."""

from __future__ import annotations

from collections.abc import Iterable

from app.services.play.bots import BotDriver, bot_to_move
from app.services.play.clock_sweep import ClockTimers
from app.services.tables.change import Change
from app.services.tables.snapshot import TableSnapshot


class Reactions:
    """The reactions to committed changes: bots and clocks."""

    def __init__(self, bots: BotDriver, clocks: ClockTimers) -> None:
        self.bots = bots
        self.clocks = clocks
        clocks.stalled = self.bot_stalled

    def committed(self, change: Change, table: TableSnapshot) -> None:
        """The ledger's reactor: wake the bots if one is to move, arm the turn clock."""
        self._wake_bots(table)
        self.clocks.arm(table)

    def resume(self, tables: Iterable[TableSnapshot]) -> None:
        """At start-up: drive the bots owed a move at any open table."""
        for table in tables:
            self._wake_bots(table)

    def bot_stalled(self, table_id: str) -> None:
        """A bot has owed a move past its watchdog (the process that should have driven it
        may have died): drive it here. Racing drivers are harmless (the ledger's
        compare-and-swap lets one bot move apply once)."""
        if table_id not in self.bots.running:
            self.bots.kick(table_id)

    def _wake_bots(self, table: TableSnapshot) -> None:
        if bot_to_move(table) is not None:
            self.bots.kick(table.id)
