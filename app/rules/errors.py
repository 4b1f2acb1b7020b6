"""Typed rule errors carrying the API's error codes."""

from __future__ import annotations

from enum import StrEnum


class ErrorCode(StrEnum):
    """The `extensions.code` values of the GraphQL contract."""

    UNAUTHENTICATED = "UNAUTHENTICATED"
    FORBIDDEN = "FORBIDDEN"
    NOT_FOUND = "NOT_FOUND"
    BAD_USER_INPUT = "BAD_USER_INPUT"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    WRONG_PHASE = "WRONG_PHASE"
    ILLEGAL_PLAY = "ILLEGAL_PLAY"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    INVALID_BID = "INVALID_BID"
    NOT_ELIGIBLE = "NOT_ELIGIBLE"
    SEAT_TAKEN = "SEAT_TAKEN"
    ALREADY_SEATED = "ALREADY_SEATED"
    TABLE_FULL = "TABLE_FULL"
    CONFLICT = "CONFLICT"
    RATE_LIMITED = "RATE_LIMITED"


class RuleError(Exception):
    """A refused move. The game that raised it is unchanged."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"RuleError({self.code.value}, {self.message!r})"
