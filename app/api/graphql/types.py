"""GraphQL types of the contract (docs/api.md): enums, objects and inputs."""

from __future__ import annotations

from enum import Enum

import strawberry

from app.rules import cards as rcards
from app.rules import levels as rlevels
from app.rules import seats as rseats


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


# The API's level of each rules level (`BotLevel.of`).
_BOT_LEVELS: dict[rlevels.BotLevel, BotLevel] = {b: BotLevel[b.name] for b in rlevels.BotLevel}
