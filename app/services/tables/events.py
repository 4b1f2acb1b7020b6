"""The names of every event the server emits, defined once (docs/api.md's enums mirror them).

`GameEvent` names a change of a table's game (a `GameUpdate`), `LobbyEvent` a
change of the lobby, `NotificationEvent` a player's notification. The GraphQL
enums are built from these, so a name can never be emitted without being in
the schema.
"""

from __future__ import annotations

from enum import StrEnum

from app.rules.moves import EventKind


class GameEvent(StrEnum):
    """What one `GameUpdate` reports."""

    SNAPSHOT = "SNAPSHOT"
    SEAT_TAKEN = "SEAT_TAKEN"
    SEAT_LEFT = "SEAT_LEFT"
    PLAYER_KICKED = "PLAYER_KICKED"
    TABLE_UPDATED = "TABLE_UPDATED"
    HOST_CHANGED = "HOST_CHANGED"
    GAME_STARTED = "GAME_STARTED"
    BID_PLACED = "BID_PLACED"
    HAND_REVEALED = "HAND_REVEALED"
    CARDS_PASSED = "CARDS_PASSED"
    CARD_PLAYED = "CARD_PLAYED"
    TRICK_WON = "TRICK_WON"
    HAND_SCORED = "HAND_SCORED"
    HAND_DEALT = "HAND_DEALT"
    PLAYER_REPLACED = "PLAYER_REPLACED"
    GAME_OVER = "GAME_OVER"
    TURN_TIMED_OUT = "TURN_TIMED_OUT"
    SEAT_RECLAIMED = "SEAT_RECLAIMED"
    REMATCH_REQUESTED = "REMATCH_REQUESTED"
    REMATCH_STARTED = "REMATCH_STARTED"
    TABLE_CLOSED = "TABLE_CLOSED"

    @classmethod
    def of(cls, kind: EventKind) -> GameEvent:
        """The game event of a rules-engine event."""
        return _FROM_KIND[kind]


_FROM_KIND: dict[EventKind, GameEvent] = {kind: GameEvent(kind.value) for kind in EventKind}


class LobbyEvent(StrEnum):
    """What one `LobbyUpdate` reports."""

    TABLE_CREATED = "TABLE_CREATED"
    TABLE_UPDATED = "TABLE_UPDATED"
    TABLE_REMOVED = "TABLE_REMOVED"
