"""GraphQL types of the contract (API.md), built from the service layer's snapshots."""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Any, cast

import strawberry

from app.rules import cards as rcards
from app.rules import levels as rlevels
from app.rules import seats as rseats
from app.rules.bidding import Bid as RBid
from app.rules.bidding import BidKind as RBidKind
from app.rules.game import Phase as RPhase
from app.rules.game import Trick as RTrick
from app.rules.scoring import TeamHandResult
from app.rules.views import (
    PublicView,
    SeatView,
    TeamView,
    own_view,
    public_view,
    waiting_view,
)
from app.services.tables import snapshot as model


@strawberry.enum
class Seat(Enum):
    NORTH = "NORTH"
    EAST = "EAST"
    SOUTH = "SOUTH"
    WEST = "WEST"

    def to_rules(self) -> rseats.Seat:
        """The rules engine's seat."""
        return rseats.Seat[self.name]


@strawberry.enum
class Team(Enum):
    NORTH_SOUTH = "NORTH_SOUTH"
    EAST_WEST = "EAST_WEST"


@strawberry.enum
class Suit(Enum):
    SPADES = "SPADES"
    HEARTS = "HEARTS"
    CLUBS = "CLUBS"
    DIAMONDS = "DIAMONDS"


@strawberry.enum
class Rank(Enum):
    TWO = "TWO"
    THREE = "THREE"
    FOUR = "FOUR"
    FIVE = "FIVE"
    SIX = "SIX"
    SEVEN = "SEVEN"
    EIGHT = "EIGHT"
    NINE = "NINE"
    TEN = "TEN"
    JACK = "JACK"
    QUEEN = "QUEEN"
    KING = "KING"
    ACE = "ACE"


@strawberry.enum
class BidKind(Enum):
    TRICKS = "TRICKS"
    NIL = "NIL"
    BLIND_NIL = "BLIND_NIL"


@strawberry.enum
class Visibility(Enum):
    PUBLIC = "PUBLIC"
    FRIENDS_ONLY = "FRIENDS_ONLY"
    PRIVATE = "PRIVATE"


@strawberry.enum
class JoinPolicy(Enum):
    OPEN = "OPEN"
    FRIENDS_ONLY = "FRIENDS_ONLY"
    INVITE_ONLY = "INVITE_ONLY"


@strawberry.enum
class GamePhase(Enum):
    WAITING = "WAITING"
    BIDDING = "BIDDING"
    EXCHANGE = "EXCHANGE"
    PLAYING = "PLAYING"
    GAME_OVER = "GAME_OVER"


@strawberry.enum
class BotLevel(Enum):
    BASIC = "BASIC"
    STANDARD = "STANDARD"
    EXPERT = "EXPERT"

    def to_rules(self) -> rlevels.BotLevel:
        """The rules engine's bot level."""
        return rlevels.BotLevel(self.value)

    @classmethod
    def of(cls, level: rlevels.BotLevel | None) -> BotLevel | None:
        """The GraphQL level (None stays None)."""
        return _BOT_LEVELS[level] if level is not None else None


@strawberry.type
class Card:
    suit: Suit
    rank: Rank


@strawberry.input
class CardInput:
    suit: Suit
    rank: Rank

    def to_rules(self) -> rcards.Card:
        """The rules engine's card."""
        # `_name_`, not `.name` (a property: two Python calls each, on every card played).
        return rcards.Card(rcards.Suit[self.suit._name_], rcards.Rank[self.rank._name_])


@strawberry.type
class Bid:
    kind: BidKind
    tricks: int | None = strawberry.field(description="set iff kind is TRICKS")


@strawberry.input
class BidInput:
    kind: BidKind
    tricks: int | None = strawberry.UNSET


@strawberry.type
class Player:
    id: strawberry.ID
    username: str


@strawberry.type
class AuthPayload:
    token: str
    player: Player


@strawberry.type
class SeatState:
    id: strawberry.ID = strawberry.field(
        description='"<tableId>:<seat>": one seat of one table, stable (for client caches)'
    )
    seat: Seat
    player_id: strawberry.ID | None = strawberry.field(
        description='null when empty; "bot:<seat>" (e.g. "bot:north") for a bot'
    )
    username: str | None
    is_bot: bool
    bid: Bid | None = strawberry.field(description="null until this seat has bid in the hand")
    tricks_won: int = strawberry.field(description="in the current hand")
    card_count: int = strawberry.field(description="cards still in hand")
    away_player: Player | None = strawberry.field(
        description="the human whose seat a bot holds after timeouts or a disconnection"
    )
    bot_level: BotLevel | None = strawberry.field(
        default=None, description="null for humans and empty seats"
    )


@strawberry.type
class TeamState:
    id: strawberry.ID = strawberry.field(
        description='"<tableId>:<team>": one team of one table, stable (for client caches)'
    )
    team: Team
    score: int
    bags: int
    target: int | None = strawberry.field(
        description="team bid of the current hand; null if none or not yet"
    )


@strawberry.type
class Play:
    seat: Seat
    card: Card


@strawberry.type
class Trick:
    plays: list[Play]
    winner: Seat


@strawberry.type
class HandResult:
    hand_number: int
    team: Team
    target: int | None = strawberry.field(description="null for double nil")
    tricks: int
    points: int = strawberry.field(description="score change of this hand, bag penalty included")
    bags: int = strawberry.field(description="bags taken this hand")
    bag_penalty: int
    score_after: int
    bags_after: int


@strawberry.type
class GameView:
    id: strawberry.ID = strawberry.field(
        description="stable per table (its table's id): every viewer's view of one game"
    )
    table_id: strawberry.ID
    phase: GamePhase
    hand_number: int = strawberry.field(description="1-based; 0 while WAITING")
    dealer: Seat | None
    turn: Seat | None = strawberry.field(description="seat expected to act now; null if none")
    viewer_seat: Seat | None = strawberry.field(
        description="the caller's seat; null for a spectator"
    )
    hand: list[Card] | None = strawberry.field(
        description="the caller's cards, sorted; null for spectators and while withheld"
    )
    hand_withheld: bool
    blind_nil_eligible: bool
    legal_plays: list[Card]
    seats: list[SeatState]
    teams: list[TeamState]
    current_trick: list[Play]
    last_trick: Trick | None
    spades_broken: bool
    history: list[HandResult]
    winner: Team | None
    version: int = strawberry.field(description="number of changes applied to this table so far")
    turn_deadline: str | None = strawberry.field(
        description="ISO-8601 UTC instant at which the seat on turn is played for; null if "
        "untimed, no turn, or a bot's turn"
    )
    next_table_id: strawberry.ID | None = strawberry.field(
        default=None, description="the rematch table, set by REMATCH_STARTED"
    )
    rematch_requests: list[Seat] = strawberry.field(
        default_factory=list, description="seats that asked for a rematch, NORTH first"
    )


# ---------------------------------------------------------------------------- converters

_CARDS: dict[rcards.Card, Card] = {
    c: Card(suit=Suit[c.suit.name], rank=Rank[c.rank.name]) for c in rcards.FULL_DECK
}


# The API's enum member of each rules member. The rules' seats and teams are IntEnums:
# indexing a tuple by them, and hashing the StrEnums, runs no Python code, where
# `Seat[seat.name]` runs three Python calls (the enum `name` property and the lookup).
_SEATS: tuple[Seat, ...] = tuple(Seat[s.name] for s in rseats.Seat)
_TEAMS: tuple[Team, ...] = tuple(Team[t.name] for t in rseats.Team)
_PHASES: dict[RPhase, GamePhase] = {p: GamePhase[p.name] for p in RPhase}
_BID_KINDS: dict[RBidKind, BidKind] = {k: BidKind[k.name] for k in RBidKind}
_BOT_LEVELS: dict[rlevels.BotLevel, BotLevel] = {b: BotLevel[b.name] for b in rlevels.BotLevel}


def card_type(card: rcards.Card) -> Card:
    """The GraphQL card (shared, immutable instances)."""
    return _CARDS[card]


def seat_type(seat: rseats.Seat | None) -> Seat | None:
    """The GraphQL seat."""
    return _SEATS[seat] if seat is not None else None


def team_type(team: rseats.Team | None) -> Team | None:
    """The GraphQL team."""
    return _TEAMS[team] if team is not None else None


def bid_type(bid: RBid | None) -> Bid | None:
    """The GraphQL bid."""
    return Bid(kind=_BID_KINDS[bid.kind], tricks=bid.tricks) if bid is not None else None


def iso_instant(epoch: float) -> str:
    """An epoch time as an ISO-8601 UTC instant with milliseconds (`...T12:00:00.000Z`)."""
    # isoformat, not strftime: no format string parsed on every move's turn deadline.
    text: str = datetime.fromtimestamp(epoch, UTC).isoformat(timespec="milliseconds")
    return text[:-6] + "Z"  # "+00:00"


def _away(occupant: model.Occupant | None) -> Player | None:
    if occupant is None:
        return None
    return Player(id=strawberry.ID(occupant.player_id), username=occupant.username or "")


def _seat_state(
    table_id: str,
    view: SeatView,
    occupant: model.Occupant | None,
    away: model.Occupant | None = None,
) -> SeatState:
    return SeatState(
        id=strawberry.ID(f"{table_id}:{view.seat._name_}"),
        seat=_SEATS[view.seat],
        player_id=strawberry.ID(occupant.player_id) if occupant is not None else None,
        username=occupant.username if occupant is not None else None,
        is_bot=occupant.is_bot if occupant is not None else False,
        bid=bid_type(view.bid),
        tricks_won=view.tricks_won,
        card_count=view.card_count,
        away_player=_away(away),
        bot_level=BotLevel.of(occupant.bot_level) if occupant is not None else None,
    )


def _team_state(table_id: str, view: TeamView) -> TeamState:
    return TeamState(
        id=strawberry.ID(f"{table_id}:{view.team._name_}"),
        team=_TEAMS[view.team],
        score=view.score,
        bags=view.bags,
        target=view.target,
    )


def _plays(plays: tuple[tuple[rseats.Seat, rcards.Card], ...]) -> list[Play]:
    return [Play(seat=_SEATS[s], card=_CARDS[c]) for s, c in plays]


def _trick(trick: RTrick | None) -> Trick | None:
    if trick is None:
        return None
    return Trick(plays=_plays(trick.plays), winner=_SEATS[trick.winner])


# The converted history of a game, found by its last result and checked result by
# result (by identity, in C), so that a move converts no finished hand again. The entry
# holds its results, so their ids are not reused while it stands; the lists are shared by
# every view of the game and never mutated.
_HISTORIES: dict[int, tuple[tuple[TeamHandResult, ...], list[HandResult]]] = {}
HISTORIES_KEPT = 1024


def _history(results: tuple[TeamHandResult, ...]) -> list[HandResult]:
    if not results:
        return []
    entry = _HISTORIES.get(id(results[-1]))
    if entry is not None and entry[0] == results:
        return entry[1]
    converted = [_result(r) for r in results]
    if len(_HISTORIES) >= HISTORIES_KEPT:
        _HISTORIES.clear()
    _HISTORIES[id(results[-1])] = (results, converted)
    return converted


def _result(r: TeamHandResult) -> HandResult:
    return HandResult(
        hand_number=r.hand_number,
        team=_TEAMS[r.team],
        target=r.target,
        tricks=r.tricks,
        points=r.points,
        bags=r.bags,
        bag_penalty=r.bag_penalty,
        score_after=r.score_after,
        bags_after=r.bags_after,
    )


# The GameView fields every viewer of one table state gets alike, of the state last
# viewed: a change is fanned out to its viewers one after another (4 seats, spectators),
# and all but the first take these instead of projecting and converting them again.
# (table, hide_tricks, the fields); replaced whole, never mutated.
_last_public: list[tuple[model.TableSnapshot, bool, dict[str, Any]]] = []


def _public_fields(table: model.TableSnapshot, hide_tricks: bool) -> dict[str, Any]:
    """The GameView fields built from the rules' public view of `table`, shared by all
    its viewers (no hand, no viewer's seat)."""
    last = _last_public[0] if _last_public else None
    if last is not None and last[0] is table and last[1] is hide_tricks:
        return last[2]
    source: PublicView
    if table.game is None:
        players = [o.player_id if o is not None else None for o in table.occupants]
        source = waiting_view(players, None)
    else:
        source = public_view(table.game)
    current, last_trick = ((), None) if hide_tricks else (source.current_trick, source.last_trick)
    fields: dict[str, Any] = {
        "id": strawberry.ID(table.id),
        "table_id": strawberry.ID(table.id),
        "phase": _PHASES[source.phase],
        "hand_number": source.hand_number,
        "dealer": seat_type(source.dealer),
        "turn": seat_type(source.turn),
        "seats": [
            _seat_state(table.id, v, table.occupants[v.seat], table.away[v.seat])
            for v in source.seats
        ],
        "teams": [_team_state(table.id, t) for t in source.teams],
        "current_trick": _plays(current),
        "last_trick": _trick(last_trick),
        "spades_broken": source.spades_broken,
        "history": _history(source.history),
        "winner": team_type(source.winner),
        "version": table.version,
        "turn_deadline": (
            iso_instant(table.turn_deadline)
            if table.turn_deadline is not None and table.clock_seat is not None
            else None
        ),
        "next_table_id": strawberry.ID(table.next_table_id) if table.next_table_id else None,
        "rematch_requests": [_SEATS[s] for s in table.rematch_requests],
    }
    _last_public[:] = [(table, hide_tricks, fields)]
    return fields


def game_view(
    table: model.TableSnapshot, viewer: rseats.Seat | None, watching: bool = True
) -> GameView:
    """The GraphQL GameView of `table` for a viewer seat (None: a spectator)."""
    fields = _public_fields(table, viewer is None and not watching)
    if table.game is None:
        return GameView(
            viewer_seat=seat_type(viewer),
            hand=None,
            hand_withheld=False,
            blind_nil_eligible=False,
            legal_plays=[],
            **fields,
        )
    # The public part is `fields` already: only the viewer's own part is projected.
    own = own_view(table.game, viewer)
    return GameView(
        viewer_seat=seat_type(own.viewer_seat),
        hand=[_CARDS[c] for c in own.hand] if own.hand is not None else None,
        hand_withheld=own.hand_withheld,
        blind_nil_eligible=own.blind_nil_eligible,
        legal_plays=[_CARDS[c] for c in own.legal_plays],
        **fields,
    )


def seat_states(table: model.TableSnapshot) -> list[SeatState]:
    """The four seats of a table as the lobby shows them (public facts only)."""
    return game_view(table, None, watching=False).seats


class LazyGameView:
    """A GameView that builds only what is read: `id`, `tableId` and `version` come from
    the table itself, and the first other field read builds the whole view (by
    `game_view`, for the same viewer) once. A move's answer usually selects only
    `{ version }`, and then no hand, trick or history is converted."""

    __slots__ = ("_table", "_view", "_viewer", "_watching")

    def __init__(
        self, table: model.TableSnapshot, viewer: rseats.Seat | None, watching: bool = True
    ) -> None:
        self._table = table
        self._viewer = viewer
        self._watching = watching
        self._view: GameView | None = None

    @property
    def id(self) -> strawberry.ID:
        """The table's id."""
        return strawberry.ID(self._table.id)

    @property
    def table_id(self) -> strawberry.ID:
        """The table's id."""
        return strawberry.ID(self._table.id)

    @property
    def version(self) -> int:
        """The table's version."""
        return self._table.version

    def __getattr__(self, name: str) -> object:
        # Any other field (and only fields: strawberry reads nothing else of a GameView).
        if name.startswith("_"):
            raise AttributeError(name)
        view = self._view
        if view is None:
            view = self._view = game_view(self._table, self._viewer, self._watching)
        return getattr(view, name)


def lazy_game_view(table: model.TableSnapshot, viewer: rseats.Seat | None) -> GameView:
    """`game_view(table, viewer)`, built field by field as the selection reads it."""
    return cast(GameView, LazyGameView(table, viewer))
