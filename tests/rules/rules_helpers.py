"""Shared helpers for the rules-engine tests: deals, games in a chosen situation, checks."""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Sequence

import pytest

from app.rules.bidding import BidKind
from app.rules.cards import FULL_DECK, Card
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Deal, Game, Phase
from app.rules.moves import Event, Move, PlaceBid, PlayCard
from app.rules.seats import SEATS, Seat
from app.rules.serialize import game_to_data
from app.rules.views import project

PLAYERS = ("alice", "bob", "carol", "dave")

BidValue = int | str  # a number of tricks, or "NIL" / "BLIND_NIL"


def cards(text: str) -> tuple[Card, ...]:
    """Cards from record-format codes separated by spaces, e.g. `"AS 10H 2C"`."""
    return tuple(Card.parse(code) for code in text.split())


def make_deal(north: str, east: str, south: str, west: str) -> Deal:
    """A full deal (indexed by seat value), checked to be 13 different cards to each seat."""
    deal = tuple(cards(h) for h in (north, east, south, west))
    assert all(len(h) == 13 for h in deal), [len(h) for h in deal]
    assert sorted(c for h in deal for c in h) == sorted(FULL_DECK)
    return deal


RANKS_HIGH_TO_LOW = ("A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3", "2")


def suit(letter: str) -> str:
    """All thirteen cards of one suit, ACE down to 2."""
    return " ".join(rank + letter for rank in RANKS_HIGH_TO_LOW)


# Each seat holds one whole suit. NORTH (all spades) can always cut, so NORTH + SOUTH take
# all 13 tricks whatever is played.
SUIT_DEAL = make_deal(north=suit("S"), east=suit("H"), south=suit("C"), west=suit("D"))

# For the first-trick rules (dealer NORTH, so EAST leads the first trick):
# EAST holds two spades and hearts; SOUTH one spade and clubs; WEST two low hearts, a club
# and diamonds; NORTH ten spades and three low diamonds.
FIRST_TRICK_DEAL = make_deal(
    north="JS 10S 9S 8S 7S 6S 5S 4S 3S 2S 4D 3D 2D",
    east="AS KS AH KH QH JH 10H 9H 8H 7H 6H 5H 4H",
    south="QS AC KC QC JC 10C 9C 8C 7C 6C 5C 4C 3C",
    west="3H 2H 2C AD KD QD JD 10D 9D 8D 7D 6D 5D",
)

# NORTH ends up with only spades after two tricks and leads one; SOUTH holds AS and 2S.
BREAKING_DEAL = make_deal(
    north="KS QS JS 10S 9S 8S 7S 6S 5S 4S 3S AH KH",
    east="QH JH 10H 9H 8H 7H AC KC QC JC 10C 9C 8C",
    south="AS 2S 6H 5H 4H 3H 2H 7C 6C 5C 4C 3C 2C",
    west=suit("D"),
)


def new_game(
    deal: Deal | None = None,
    *,
    seed: int = 1,
    scores: Sequence[int] | None = None,
    deals: dict[int, Deal] | None = None,
) -> Game:
    """A game at its first bid, NORTH dealing.

    With `scores`, the first hand is dealt as if the teams stood at those scores at the
    deal (which decides blind nil eligibility).
    """
    forced = {1: deal} if deal is not None else deals
    game, _ = Game.start(PLAYERS, seed=seed, forced_deals=forced)
    if scores is not None:
        game.scores = list(scores)
        game.hand = game._new_hand(1, Seat.NORTH)
    return game


def bid_move(seat: Seat, value: BidValue) -> PlaceBid:
    """The move of `seat` bidding `value`."""
    if isinstance(value, int):
        return PlaceBid(seat, BidKind.TRICKS, value)
    return PlaceBid(seat, BidKind(value))


def bid(game: Game, *values: BidValue) -> list[Event]:
    """Place bids in turn order, starting with the seat whose turn it is."""
    events: list[Event] = []
    for value in values:
        seat = game.turn
        assert seat is not None
        events += game.apply(bid_move(seat, value))
    return events


def play(game: Game, *codes: str) -> list[Event]:
    """Play cards in turn order, starting with the seat whose turn it is."""
    events: list[Event] = []
    for code in codes:
        seat = game.turn
        assert seat is not None
        events += game.apply(PlayCard(seat, Card.parse(code)))
    return events


Chooser = Callable[[Game, Seat], Card]


def first_legal(game: Game, seat: Seat) -> Card:
    """A fixed play policy: the first legal card in hand order."""
    return game.legal_plays(seat)[0]


def play_out_hand(game: Game, choose: Chooser = first_legal) -> list[Event]:
    """Play the current hand to its end (the game must be in PLAYING)."""
    assert game.phase is Phase.PLAYING
    number = game.hand.number
    events: list[Event] = []
    while game.phase is Phase.PLAYING and game.hand.number == number:
        seat = game.turn
        assert seat is not None
        events += game.apply(PlayCard(seat, choose(game, seat)))
    return events


def expect_refusal(game: Game, move: Move, code: ErrorCode) -> RuleError:
    """Apply `move`, expect it refused with `code`, and check that nothing changed."""
    before = game_to_data(game)
    turn, phase = game.turn, game.phase
    with pytest.raises(RuleError) as info:
        game.apply(move)
    assert info.value.code is code, info.value
    assert game_to_data(game) == before
    assert (game.turn, game.phase) == (turn, phase)
    return info.value


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def cards_in(value: object) -> list[Card]:
    """Every card anywhere inside a view (dataclasses, tuples and lists walked)."""
    found: list[Card] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Card):
            found.append(item)
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif item is None or isinstance(item, int | str):
            continue  # scalars, enums included
        else:
            names = _FIELD_NAMES.get(type(item))
            if names is None:
                assert dataclasses.is_dataclass(item), f"unexpected {type(item)} in a view"
                names = tuple(f.name for f in dataclasses.fields(item))
                _FIELD_NAMES[type(item)] = names
            stack.extend(getattr(item, name) for name in names)
    return found


def played_cards(game: Game) -> set[Card]:
    """The cards already played in the current hand (public to everyone)."""
    hand = game.hand
    played = {c for t in hand.tricks for _, c in t.plays}
    return played | {c for _, c in hand.current}


def assert_views_hide_other_cards(game: Game) -> None:
    """No seat's view and no spectator's view holds an unplayed card that is not its own."""
    played = played_cards(game)
    for viewer in (*SEATS, None):
        view = project(game, viewer)
        own: set[Card] = set()
        if viewer is not None and view.hand is not None:
            own = set(game.hand.hands[viewer])
            assert list(view.hand) == game.hand.hands[viewer]
        unexpected = set(cards_in(view)) - own - played
        assert not unexpected, (viewer, unexpected)


def cards_accounted(game: Game) -> Counter[Card]:
    """Hands + current trick + finished tricks + cards passed but not yet received."""
    hand = game.hand
    counted: Counter[Card] = Counter()
    for held in hand.hands:
        counted.update(held)
    counted.update(c for _, c in hand.current)
    counted.update(c for t in hand.tricks for _, c in t.plays)
    if game.phase is Phase.EXCHANGE:
        counted.update(c for e in hand.exchanges for c in e.cards)
    return counted
