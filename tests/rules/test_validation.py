"""Validation order of docs/api.md, and refused moves changing nothing."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from app.rules.bidding import BidKind
from app.rules.bots import basic_move
from app.rules.cards import Card
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game, Phase
from app.rules.moves import (
    EventKind,
    Move,
    PassCards,
    PlaceBid,
    PlayCard,
    ReplacePlayer,
    RevealHand,
)
from app.rules.seats import SEATS, Seat
from app.rules.serialize import game_to_data
from tests.rules.rules_helpers import (
    FIRST_TRICK_DEAL,
    SUIT_DEAL,
    bid,
    cards,
    expect_refusal,
    new_game,
    play,
    play_out_hand,
)

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
TRICKS, NIL_KIND, BLIND = BidKind.TRICKS, BidKind.NIL, BidKind.BLIND_NIL


def _c(code: str) -> Card:
    return Card.parse(code)


def bidding() -> Game:
    """FIRST_TRICK_DEAL, nobody eligible for blind nil; EAST to bid."""
    return new_game(FIRST_TRICK_DEAL)


def bidding_withheld() -> Game:
    """NORTH + SOUTH 100 behind; EAST bid 3; SOUTH (withheld) to bid."""
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 3)
    return game


def exchange() -> Game:
    """SOUTH bid blind nil; SOUTH to pass (it holds QS and AC..3C)."""
    game = new_game(FIRST_TRICK_DEAL, scores=(0, 100))
    bid(game, 3, "BLIND_NIL", 2, 5)
    return game


def playing() -> Game:
    """First trick, EAST to lead (AS KS and hearts)."""
    game = new_game(FIRST_TRICK_DEAL)
    bid(game, 1, 1, 1, 1)
    return game


def following() -> Game:
    """EAST led AH; SOUTH (QS and clubs, no heart) to play."""
    game = playing()
    play(game, "AH")
    return game


def game_over() -> Game:
    game = new_game(SUIT_DEAL)
    bid(game, 0, 0, 0, 13)
    game.scores = [200, 0]
    play_out_hand(game)
    assert game.phase is Phase.GAME_OVER
    return game


CASES: list[tuple[Callable[[], Game], Move, ErrorCode]] = [
    # WRONG_PHASE comes first, even out of turn or with bad input.
    (bidding, PlayCard(W, _c("2C")), ErrorCode.WRONG_PHASE),
    (bidding, PlayCard(E, _c("AH")), ErrorCode.WRONG_PHASE),
    (bidding, PassCards(N, cards("AC AC")), ErrorCode.WRONG_PHASE),
    (exchange, PlaceBid(S, TRICKS, 3), ErrorCode.WRONG_PHASE),
    (exchange, PlaceBid(N, TRICKS, 30), ErrorCode.WRONG_PHASE),
    (exchange, RevealHand(N), ErrorCode.WRONG_PHASE),
    (exchange, PlayCard(E, _c("AH")), ErrorCode.WRONG_PHASE),
    (playing, PlaceBid(E, TRICKS, 99), ErrorCode.WRONG_PHASE),
    (playing, PassCards(W, cards("AS AS")), ErrorCode.WRONG_PHASE),
    (playing, RevealHand(E), ErrorCode.WRONG_PHASE),
    (game_over, PlaceBid(E, TRICKS, 3), ErrorCode.WRONG_PHASE),
    (game_over, PlayCard(E, _c("AH")), ErrorCode.WRONG_PHASE),
    (game_over, PassCards(S, cards("AC KC")), ErrorCode.WRONG_PHASE),
    (game_over, RevealHand(N), ErrorCode.WRONG_PHASE),
    (game_over, ReplacePlayer(N, "bot:north"), ErrorCode.WRONG_PHASE),
    # NOT_YOUR_TURN before malformed input, cards not held and rule breaks.
    (bidding, PlaceBid(N, TRICKS, 20), ErrorCode.NOT_YOUR_TURN),
    (bidding, PlaceBid(N, TRICKS, None), ErrorCode.NOT_YOUR_TURN),
    (bidding, PlaceBid(W, NIL_KIND, 2), ErrorCode.NOT_YOUR_TURN),
    (bidding, PlaceBid(S, BLIND, None), ErrorCode.NOT_YOUR_TURN),
    (bidding_withheld, PlaceBid(N, TRICKS, 3), ErrorCode.NOT_YOUR_TURN),
    (bidding_withheld, PlaceBid(E, TRICKS, 3), ErrorCode.NOT_YOUR_TURN),
    (exchange, PassCards(N, cards("AC AC")), ErrorCode.NOT_YOUR_TURN),
    (exchange, PassCards(N, cards("2D 3D")), ErrorCode.NOT_YOUR_TURN),
    (exchange, PassCards(E, cards("AH KH")), ErrorCode.NOT_YOUR_TURN),
    (playing, PlayCard(S, _c("AS")), ErrorCode.NOT_YOUR_TURN),
    (playing, PlayCard(S, _c("QS")), ErrorCode.NOT_YOUR_TURN),
    (following, PlayCard(E, _c("KH")), ErrorCode.NOT_YOUR_TURN),
    # Malformed input: INVALID_BID / BAD_USER_INPUT before CARD_NOT_IN_HAND and NOT_ELIGIBLE.
    (bidding, PlaceBid(E, TRICKS, 14), ErrorCode.INVALID_BID),
    (bidding, PlaceBid(E, TRICKS, None), ErrorCode.INVALID_BID),
    (bidding, PlaceBid(E, NIL_KIND, 3), ErrorCode.INVALID_BID),
    (bidding, PlaceBid(E, BLIND, 3), ErrorCode.INVALID_BID),
    (bidding, PlaceBid(E, BLIND, 0), ErrorCode.INVALID_BID),
    (bidding_withheld, PlaceBid(S, TRICKS, 3), ErrorCode.INVALID_BID),
    (bidding_withheld, PlaceBid(S, NIL_KIND, None), ErrorCode.INVALID_BID),
    (bidding_withheld, PlaceBid(S, TRICKS, 14), ErrorCode.INVALID_BID),
    (bidding_withheld, PlaceBid(S, BLIND, 0), ErrorCode.INVALID_BID),
    (exchange, PassCards(S, cards("AH AH")), ErrorCode.BAD_USER_INPUT),
    (exchange, PassCards(S, cards("AC AC")), ErrorCode.BAD_USER_INPUT),
    (exchange, PassCards(S, cards("AH")), ErrorCode.BAD_USER_INPUT),
    (exchange, PassCards(S, cards("AH KH QH")), ErrorCode.BAD_USER_INPUT),
    (exchange, PassCards(S, ()), ErrorCode.BAD_USER_INPUT),
    # CARD_NOT_IN_HAND before ILLEGAL_PLAY.
    (exchange, PassCards(S, cards("AH KH")), ErrorCode.CARD_NOT_IN_HAND),
    (exchange, PassCards(S, cards("AC AH")), ErrorCode.CARD_NOT_IN_HAND),
    (playing, PlayCard(E, _c("QS")), ErrorCode.CARD_NOT_IN_HAND),
    (playing, PlayCard(E, _c("AC")), ErrorCode.CARD_NOT_IN_HAND),
    (following, PlayCard(S, _c("2H")), ErrorCode.CARD_NOT_IN_HAND),
    (following, PlayCard(S, _c("AH")), ErrorCode.CARD_NOT_IN_HAND),
    # Against the rules.
    (playing, PlayCard(E, _c("AS")), ErrorCode.ILLEGAL_PLAY),
    (following, PlayCard(S, _c("QS")), ErrorCode.ILLEGAL_PLAY),
    (bidding, PlaceBid(E, BLIND, None), ErrorCode.NOT_ELIGIBLE),
    (bidding, RevealHand(E), ErrorCode.NOT_ELIGIBLE),
    (bidding, RevealHand(W), ErrorCode.NOT_ELIGIBLE),  # a reveal needs no turn
    (bidding_withheld, RevealHand(E), ErrorCode.NOT_ELIGIBLE),
    (bidding_withheld, PlaceBid(S, BidKind.NIL, None), ErrorCode.INVALID_BID),
]


@pytest.mark.parametrize(
    ("situation", "move", "code"),
    CASES,
    ids=[f"{s.__name__}-{m}-{c.value}" for s, m, c in CASES],
)
def test_refused_move_answers_first_failure_and_changes_nothing(
    situation: Callable[[], Game], move: Move, code: ErrorCode
) -> None:
    game = situation()
    error = expect_refusal(game, move, code)
    assert error.message


@pytest.mark.parametrize(("situation", "move", "code"), CASES[:12])
def test_refused_apply_steps_changes_nothing(
    situation: Callable[[], Game], move: Move, code: ErrorCode
) -> None:
    game = situation()
    before = game_to_data(game)
    with pytest.raises(RuleError) as info:
        game.apply_steps(move)
    assert info.value.code is code
    assert game_to_data(game) == before


def test_reveal_needs_no_turn() -> None:
    game = bidding_withheld()
    assert game.turn is S
    game.apply(RevealHand(N))
    assert not game.hand.withheld[N]


def test_a_move_refused_then_retried_correctly_is_accepted() -> None:
    game = following()
    expect_refusal(game, PlayCard(S, _c("QS")), ErrorCode.ILLEGAL_PLAY)
    play(game, "3C")
    assert game.turn is W


def test_apply_steps_gives_the_state_after_each_event() -> None:
    game = playing()
    play(game, "AH", "3C", "2H")
    steps = game.apply_steps(PlayCard(N, _c("2D")))
    assert [s.event.kind for s in steps] == [EventKind.CARD_PLAYED, EventKind.TRICK_WON]
    assert len(steps[0].state.hand.current) == 4
    # A complete trick waits for its winner: nobody is to play, nothing is playable.
    assert steps[0].state.turn is None
    assert all(steps[0].state.legal_plays(seat) == [] for seat in SEATS)
    assert steps[1].state.hand.current == [] and len(steps[1].state.hand.tricks) == 1
    assert game_to_data(steps[-1].state) == game_to_data(game)
    steps[0].state.hand.hands[E].clear()  # the copies are independent of the game
    assert len(game.hand.hands[E]) == 12


def test_after_the_thirteenth_trick_nobody_plays_until_the_hand_is_scored() -> None:
    game, _ = Game.start(["n", "e", "s", "w"], seed=3)
    rng = random.Random(3)
    while len(game.hand.tricks) < 12 or len(game.hand.current) < 3:
        turn = game.turn
        assert turn is not None
        game.apply(basic_move(game, turn, rng))
    last = game.turn
    assert last is not None
    steps = game.apply_steps(basic_move(game, last, rng))
    kinds = [s.event.kind for s in steps]
    assert kinds[:3] == [EventKind.CARD_PLAYED, EventKind.TRICK_WON, EventKind.HAND_SCORED]
    for step in steps[:2]:  # the last card, then the last trick won: not yet scored
        assert step.state.turn is None
        assert all(step.state.legal_plays(seat) == [] for seat in SEATS)
