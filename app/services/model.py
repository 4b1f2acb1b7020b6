"""The service layer's view of a table: immutable snapshots and the messages carrying them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from app.rules.game import Game, Phase
from app.rules.seats import SEATS, Seat


class Visibility(StrEnum):
    """Who can see a table."""

    PUBLIC = "PUBLIC"
    FRIENDS_ONLY = "FRIENDS_ONLY"
    PRIVATE = "PRIVATE"


class JoinPolicy(StrEnum):
    """Who, among those who see a table, may sit."""

    OPEN = "OPEN"
    FRIENDS_ONLY = "FRIENDS_ONLY"
    INVITE_ONLY = "INVITE_ONLY"


class TableStatus(StrEnum):
    """A table's life: waiting for players, playing, finished, or closed unfinished."""

    WAITING = "WAITING"
    PLAYING = "PLAYING"
    FINISHED = "FINISHED"
    CLOSED = "CLOSED"

    @property
    def open(self) -> bool:
        """Listed in the lobby (not finished, not closed)."""
        return self in (TableStatus.WAITING, TableStatus.PLAYING)


def is_bot(player_id: str | None) -> bool:
    """Bots carry `bot:<seat>` ids."""
    return player_id is not None and player_id.startswith("bot:")


@dataclass(frozen=True, slots=True)
class Occupant:
    """Who sits in a seat: a player (with username) or a bot."""

    player_id: str
    username: str | None

    @property
    def is_bot(self) -> bool:
        """True for a bot."""
        return is_bot(self.player_id)

    @classmethod
    def bot(cls, seat: Seat) -> Occupant:
        """The bot for `seat`."""
        return cls(seat.bot_id, f"Bot {seat.name.title()}")


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """A table at one version. Never mutated; `game` is never mutated either."""

    id: str
    name: str | None
    host_id: str
    host_name: str
    visibility: Visibility
    join_policy: JoinPolicy
    spectating: bool
    status: TableStatus
    version: int
    occupants: tuple[Occupant | None, ...]
    game: Game | None
    created_at: float = 0.0
    deal_seed: int | None = None  # an explicit seed for the deals (tests, tournaments)
    rated: bool = False  # four humans at the start; the game's end changes ratings
    # Rematch (RULES.md, Rematch): when the game ended, the seats that asked for a
    # rematch, the table this one is the rematch of, and the rematch table once it started.
    finished_at: float | None = None
    rematch_requests: tuple[Seat, ...] = ()
    rematch_of: str | None = None
    next_table_id: str | None = None

    @property
    def phase(self) -> Phase:
        """The game's phase (WAITING before the game starts)."""
        return self.game.phase if self.game is not None else Phase.WAITING

    def seat_of(self, player_id: str | None) -> Seat | None:
        """The seat `player_id` sits in, if any."""
        if player_id is None:
            return None
        for seat in SEATS:
            occupant = self.occupants[seat]
            if occupant is not None and occupant.player_id == player_id:
                return seat
        return None

    @property
    def full(self) -> bool:
        """All four seats taken."""
        return all(o is not None for o in self.occupants)

    def evolve(self, **changes: Any) -> TableSnapshot:
        """A copy with `changes` applied."""
        return replace(self, **changes)


@dataclass(slots=True)
class GameMessage:
    """One change of a table's game, as the broker carries it to game subscribers.

    It holds the whole table state (hidden cards included) and is projected per
    subscriber; `views` caches one projection per viewer seat for this message.
    """

    event: str
    seat: Seat | None
    table: TableSnapshot
    views: dict[Any, Any] = field(default_factory=dict)
    committed_at: float = 0.0  # when the change was committed (fan-out latency metric)

    @property
    def version(self) -> int:
        """The version this change produced."""
        return self.table.version


@dataclass(slots=True)
class LobbyMessage:
    """A lobby change: TABLE_CREATED, TABLE_UPDATED or TABLE_REMOVED."""

    event: str
    table: TableSnapshot


def now_ts() -> float:
    """The current time as epoch seconds."""
    return time.time()
