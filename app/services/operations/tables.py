"""An operator's actions on tables (`spades admin close-table`)."""

from __future__ import annotations

import logging

from app.rules.errors import ErrorCode, RuleError
from app.services.lobby.service import close_table
from app.services.tables.change import Change
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import TableSnapshot, TableStatus
from app.store.operator_marks import mark_operator_change

log = logging.getLogger(__name__)

MAX_REASON_LENGTH = 500


class TableOperations:
    """Closes tables as the rules close them: one more change through the ledger."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def close(self, table_id: str, reason: str) -> TableSnapshot:
        """Close the table now, whatever its state (TABLE_CLOSED is its last change, it
        leaves the lobby, its streams end, every move is refused); `reason` goes into its
        move log. NOT_FOUND for an unknown table, WRONG_PHASE for one already closed,
        BAD_USER_INPUT for a blank or overlong reason."""
        why = reason.strip()
        if not why or len(why) > MAX_REASON_LENGTH:
            raise RuleError(
                ErrorCode.BAD_USER_INPUT,
                f"a reason is 1 to {MAX_REASON_LENGTH} characters",
            )

        def decide(table: TableSnapshot) -> Change:
            if table.status is TableStatus.CLOSED:
                raise RuleError(ErrorCode.WRONG_PHASE, "the table is already closed")
            change = Change()
            close_table(table, change, reason=why)
            # Tells a server process without a broker to look (outside_changes.py).
            change.effects.append(mark_operator_change)
            return change

        _, closed = await self.ledger.change(table_id, decide)
        log.info("table %s closed by an operator: %s", table_id, why)
        return closed
