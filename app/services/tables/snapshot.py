"""The service layer's view of a table: immutable snapshots and the messages carrying them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from app.rules.game import Game, Phase
from app.rules.levels import DEFAULT_BOT_LEVEL, BotLevel
from app.rules.seats import SEATS, Seat
from app.services.tables.events import GameEvent, LobbyEvent

# docs/rules.md, "Live tables": the turn clock's default and range (0: untimed).
DEFAULT_TURN_SECONDS = 30
MIN_TURN_SECONDS = 5
MAX_TURN_SECONDS = 300
NO_AWAY: tuple[None, None, None, None] = (None, None, None, None)
NO_TIMEOUTS = (0, 0, 0, 0)


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
    """Who sits in a seat: a player (with username) or a bot (with its level)."""

    player_id: str
    username: str | None
    bot_level: BotLevel | None = None  # None for a human

    @property
    def is_bot(self) -> bool:
        """True for a bot."""
        return self.player_id.startswith("bot:")  # `is_bot`, inline: read many times a move

    @classmethod
    def bot(cls, seat: Seat, level: BotLevel = DEFAULT_BOT_LEVEL) -> Occupant:
        """The bot of `level` for `seat` (addBot's level, or a table's replacementBot)."""
        return cls(seat.bot_id, f"Bot {seat.name.title()}", level)


# Not slotted: a move evolves the table two or three times (each step, then its clock),
# and a copy of its attribute dict is one C call where `dataclasses.replace` of a slotted
# class ran a Python loop over its fields and the frozen `__init__` (8 -> 1.3 µs).
@dataclass(frozen=True)
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
    # Live tables (docs/rules.md): the turn clock, the replacement bot, absent players.
    turn_seconds: int = DEFAULT_TURN_SECONDS
    replacement_bot: BotLevel = DEFAULT_BOT_LEVEL
    turn_deadline: float | None = None  # epoch seconds at which the seat on turn is played for
    away: tuple[Occupant | None, ...] = NO_AWAY  # per seat: the human a bot stands in for
    timeouts: tuple[int, ...] = NO_TIMEOUTS  # per seat: consecutive timeouts
    timed_out: Seat | None = None  # TURN_TIMED_OUT is committed, the move for it still owed
    rated: bool = False  # four humans at the start; the game's end changes ratings
    # Rematch (docs/rules.md, Rematch): when the game ended, the seats that asked for a
    # rematch, the table this one is the rematch of, and the rematch table once it started.
    finished_at: float | None = None
    rematch_requests: tuple[Seat, ...] = ()
    rematch_of: str | None = None
    next_table_id: str | None = None

    @property
    def phase(self) -> Phase:
        """The game's phase (WAITING before the game starts)."""
        return self.game.phase if self.game is not None else Phase.WAITING

    @property
    def clock_seat(self) -> Seat | None:
        """The seat whose turn is timed now: a human's turn in a game in play on a
        timed table."""
        game = self.game
        if self.turn_seconds <= 0 or self.status is not TableStatus.PLAYING or game is None:
            return None
        seat = game.turn
        if seat is None:
            return None
        occupant = self.occupants[seat]
        return seat if occupant is not None and not occupant.is_bot else None

    def away_seat(self, player_id: str) -> Seat | None:
        """The seat a bot holds for `player_id`, if any."""
        for seat in SEATS:
            away = self.away[seat]
            if away is not None and away.player_id == player_id:
                return seat
        return None

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
        """A copy with `changes` applied: `dataclasses.replace`, as the class has no
        `__post_init__` and no field outside `__init__`."""
        if not _TABLE_FIELDS.issuperset(changes):
            unknown = sorted(set(changes) - _TABLE_FIELDS)
            raise TypeError(f"TableSnapshot has no field {', '.join(unknown)}")
        copy = _new(TableSnapshot)
        attributes = copy.__dict__
        attributes.update(self.__dict__)
        attributes.update(changes)
        return copy


_TABLE_FIELDS = frozenset(f.name for f in fields(TableSnapshot))
_new = object.__new__


@dataclass(slots=True)
class GameMessage:
    """One change of a table's game, as the broker carries it to game subscribers.

    It holds the whole table state (hidden cards included) and is projected per
    subscriber; `views` caches one projection per viewer seat for this message.
    """

    event: GameEvent
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

    event: LobbyEvent
    table: TableSnapshot


def now_ts() -> float:
    """The current time as epoch seconds."""
    return time.time()
