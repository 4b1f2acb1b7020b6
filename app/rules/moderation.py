"""Moderation's pure rules (docs/rules.md, Moderation): roles, who may sanction whom,
the bounds of a mute, a report's note and the reporting limit."""

from __future__ import annotations

from enum import StrEnum

from app.rules.errors import ErrorCode, RuleError

MIN_MUTE_MINUTES = 1
MAX_MUTE_MINUTES = 10_080  # a week
MAX_NOTE = 500
MAX_REASON = 500
REPORTS_PER_WINDOW = 10
REPORT_WINDOW_SECONDS = 3600.0


class Role(StrEnum):
    """What an account may do: every account is a PLAYER until an operator says more."""

    PLAYER = "PLAYER"
    MODERATOR = "MODERATOR"
    ADMIN = "ADMIN"

    @property
    def moderates(self) -> bool:
        """Whether this role may use the moderator operations."""
        return self is not Role.PLAYER


class ReportReason(StrEnum):
    """Why a player is reported."""

    ABUSIVE_CHAT = "ABUSIVE_CHAT"
    CHEATING = "CHEATING"
    STALLING = "STALLING"
    OTHER = "OTHER"


class ReportStatus(StrEnum):
    """Where a report stands: open in the queue, or resolved one way or the other."""

    OPEN = "OPEN"
    ACTIONED = "ACTIONED"
    DISMISSED = "DISMISSED"


class SanctionKind(StrEnum):
    """A timed mute (no chat) or a ban until lifted (no access at all)."""

    MUTE = "MUTE"
    BAN = "BAN"


def check_may_sanction(actor_id: str | None, target_id: str, target_role: Role) -> None:
    """FORBIDDEN when `actor_id` (None: the operator) may not sanction the target:
    nobody sanctions an admin, nor themselves."""
    if target_role is Role.ADMIN:
        raise RuleError(ErrorCode.FORBIDDEN, "an admin cannot be sanctioned")
    if actor_id is not None and actor_id == target_id:
        raise RuleError(ErrorCode.FORBIDDEN, "nobody may sanction themselves")


def check_mute_minutes(minutes: object) -> int:
    """The length of a mute, if within 1..10,080 minutes (BAD_USER_INPUT otherwise)."""
    if (
        isinstance(minutes, bool)
        or not isinstance(minutes, int)
        or not MIN_MUTE_MINUTES <= minutes <= MAX_MUTE_MINUTES
    ):
        raise RuleError(
            ErrorCode.BAD_USER_INPUT,
            f"a mute lasts {MIN_MUTE_MINUTES} to {MAX_MUTE_MINUTES:,} minutes",
        )
    return minutes


def clean_reason(reason: object) -> str:
    """A sanction's reason, trimmed: 1..500 characters (BAD_USER_INPUT otherwise)."""
    trimmed = reason.strip() if isinstance(reason, str) else ""
    if not 0 < len(trimmed) <= MAX_REASON:
        raise RuleError(ErrorCode.BAD_USER_INPUT, f"a reason is 1 to {MAX_REASON} characters")
    return trimmed


def clean_note(note: object) -> str | None:
    """A report's note, trimmed (None when absent or blank): at most 500 characters
    (BAD_USER_INPUT otherwise)."""
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > MAX_NOTE:
        raise RuleError(ErrorCode.BAD_USER_INPUT, f"a note is at most {MAX_NOTE} characters")
    return note.strip() or None


def report_wait(recent: list[float], now: float) -> float | None:
    """Seconds until one more report may be stored, given the creation times of the
    reporter's stored reports (`recent`), or None when one may be stored now: at most
    REPORTS_PER_WINDOW in any REPORT_WINDOW_SECONDS."""
    inside = sorted(t for t in recent if t > now - REPORT_WINDOW_SECONDS)
    if len(inside) < REPORTS_PER_WINDOW:
        return None
    # The window frees a place when the oldest report that keeps it full leaves it.
    oldest = inside[len(inside) - REPORTS_PER_WINDOW]
    return max(0.0, oldest + REPORT_WINDOW_SECONDS - now)


def mute_active(ends_at: float | None, lifted_at: float | None, now: float) -> bool:
    """Whether a mute holds at `now`: not lifted and not yet over."""
    return lifted_at is None and ends_at is not None and ends_at > now
