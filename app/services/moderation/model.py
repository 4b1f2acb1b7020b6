"""Moderation's concepts as the service layer hands them out."""

from __future__ import annotations

from dataclasses import dataclass

from app.rules.moderation import ReportReason, ReportStatus, Role, SanctionKind
from app.services.accounts.auth import Player
from app.services.chat.model import ChatMessage


@dataclass(frozen=True, slots=True)
class Actor:
    """Who takes a moderator action: a moderator or admin, or the operator at the
    command line (`player` None: recorded as no player)."""

    player: Player | None
    role: Role

    @property
    def id(self) -> str | None:
        """The acting player's id; None for the operator."""
        return self.player.id if self.player is not None else None


# The operator running `spades admin`: above every role, recorded as no player.
OPERATOR = Actor(None, Role.ADMIN)


@dataclass(frozen=True, slots=True)
class Sanction:
    """A mute or a ban, with who gave and who lifted it (None: the operator)."""

    id: str
    player: Player
    kind: SanctionKind
    reason: str
    by: Player | None
    created_at: float
    ends_at: float | None  # None: until lifted
    lifted_at: float | None
    lifted_by: Player | None


@dataclass(frozen=True, slots=True)
class Mute:
    """What a muted player is told: why, and until when."""

    reason: str
    ends_at: float


@dataclass(frozen=True, slots=True)
class Report:
    """A report of a player, with the reported message as it was when reported."""

    id: str
    reporter: Player
    reported: Player
    reason: ReportReason
    note: str | None
    message: ChatMessage | None
    table_id: str | None
    created_at: float
    status: ReportStatus
    resolved_by: Player | None
    resolved_at: float | None
