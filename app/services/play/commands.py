"""Game commands (reveal, bid, pass, play): who may act, and the move applied through the
ledger. What answers them (bots, clocks) reacts to the committed change
(app/services/play/reactions.py)."""

from __future__ import annotations

from collections.abc import Callable

from app.rules.errors import ErrorCode, RuleError
from app.rules.moves import Move
from app.rules.seats import Seat
from app.services.accounts.auth import Player
from app.services.lobby.service import TableService, plausible_id
from app.services.play.clock import reset_timeouts
from app.services.play.moves import apply_move
from app.services.social.service import SocialService
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot


class _NotSeated(Exception):
    """The caller has no seat at the table (decided inside the transaction)."""


class GameService:
    """Checks who may act and applies moves through the ledger."""

    def __init__(self, ledger: Ledger, tables: TableService, social: SocialService) -> None:
        self.ledger = ledger
        self.tables = tables
        self.social = social

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
