"""A quick-play ticket as the service layer hands it out, and its broker messages."""

from __future__ import annotations

from dataclasses import dataclass

from app.rules.matchmaking import TicketStatus
from app.store.quickplay import TicketRow

# Expiry (docs/rules.md, Quick play): a SEARCHING ticket nobody watched for this long.
UNWATCHED_SECONDS = 10.0
NUDGE_CHANNEL = "quickplay"


def ticket_channel(player_id: str) -> str:
    """The broker channel of one player's ticket changes."""
    return f"quickplay:{player_id}"


@dataclass(frozen=True, slots=True)
class QuickPlayTicket:
    """One ticket: SEARCHING, or ended (MATCHED with its table, CANCELLED, EXPIRED)."""

    id: str
    player_id: str
    status: TicketStatus
    rated: bool
    started_at: float
    ended_at: float | None = None
    table_id: str | None = None

    @classmethod
    def of(cls, row: TicketRow) -> QuickPlayTicket:
        """The ticket of a stored row."""
        return cls(
            id=row.id,
            player_id=row.player_id,
            status=TicketStatus(row.status),
            rated=row.rated,
            started_at=row.started_at,
            ended_at=row.ended_at,
            table_id=row.table_id,
        )

    def bots_at(self, bot_seconds: float) -> float | None:
        """When bots take the seats nobody took: None for a rated ticket and once ended."""
        if self.rated or self.status.final:
            return None
        return self.started_at + bot_seconds


@dataclass(frozen=True, slots=True)
class TicketChanged:
    """A ticket started or ended (the broker carries it to its owner's streams)."""

    ticket: QuickPlayTicket


@dataclass(frozen=True, slots=True)
class MatchmakingNudge:
    """A ticket started: the matchmaker may run its next wave early."""
