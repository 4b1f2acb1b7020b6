"""Properties of random legal games (hypothesis): invariants the rulebook implies."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from app.rules.bidding import Bid, BidKind
from app.rules.bots import random_move
from app.rules.cards import FULL_DECK, Card, Suit, sort_key
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game, Phase
from app.rules.moves import (
    Event,
    EventKind,
    Move,
    PassCards,
    PlaceBid,
    PlayCard,
    ReplacePlayer,
    RevealHand,
)
from app.rules.seats import SEATS, TEAMS, Seat
from app.rules.serialize import game_from_data, game_to_data
from app.rules.views import project
from tests.rules.rules_helpers import assert_views_hide_other_cards, cards_accounted

SEEDS = st.integers(min_value=0, max_value=2**63 - 1)
FEW = settings(max_examples=40, deadline=None)
FULL_DECK_COUNT = Counter(FULL_DECK)


def random_game(seed: int) -> Iterator[tuple[Game, list[Event]]]:
    """A game where every decision is uniformly random among the legal ones.

    Yields the game (mutated in place) with the events of each move, the start first.
    """
    rng = random.Random(seed)
    game, started = Game.start([s.bot_id for s in SEATS], seed=seed)
    yield game, [started]
    while game.phase is not Phase.GAME_OVER:
        seat = game.turn
        assert seat is not None
        yield game, game.apply(random_move(game, seat, rng))


def play_until(seed: int, moves: int) -> Game:
    """The random game of `seed` after `moves` moves (or at its end)."""
    games = random_game(seed)
    game, _ = next(games)  # the same game object, moved on in place
    for _ in range(moves):
        if next(games, None) is None:
            break
    return game


def finished_game(seed: int) -> Game:
    *_, (game, _) = random_game(seed)
    assert game.phase is Phase.GAME_OVER
    return game


# ----------------------------------------------------------------- rulebook oracles


def rulebook_legal(hand: Sequence[Card], led: Suit | None, first: bool, broken: bool) -> set[Card]:
    """The legal cards as docs/rules.md words them."""
    non_spades = [c for c in hand if c.suit is not Suit.SPADES]
    if led is None:
        if (first or not broken) and non_spades:
            return set(non_spades)
        return set(hand)
    following = [c for c in hand if c.suit is led]
    if following:
        return set(following)
    if first and non_spades:
        return set(non_spades)
    return set(hand)


def rulebook_points(
    bids: Sequence[Bid], tricks: Sequence[int], later_bidder: int, bags_before: int
) -> tuple[int, int]:
    """(points, bags after) of a team; `later_bidder` indexes the partner who bid second."""
    points = 0
    for b, t in zip(bids, tricks, strict=True):
        if b.kind is BidKind.NIL:
            points += 50 if t == 0 else -50
        elif b.kind is BidKind.BLIND_NIL:
            points += 100 if t == 0 else -100
    numbers = [i for i, b in enumerate(bids) if b.kind is BidKind.TRICKS]
    target = None
    if len(numbers) == 2:
        target = bids[later_bidder].tricks
    elif len(numbers) == 1:
        target = bids[numbers[0]].tricks
    team_tricks = sum(tricks)
    if target is not None and target >= 1:
        if team_tricks >= target:
            points += 10 * target
            bags = team_tricks - target
        else:
            points -= 10 * target
            bags = 0
    else:
        bags = team_tricks
    count = bags_before + bags
    points += bags - 100 * (count // 10)
    return points, count % 10


def rulebook_refusal(game: Game, move: Move) -> ErrorCode | None:
    """The code docs/api.md's validation order gives `move`, or None when it is legal."""
    phase, hand = game.phase, game.hand
    if isinstance(move, ReplacePlayer):
        if phase is Phase.GAME_OVER:
            return ErrorCode.WRONG_PHASE
        return None if move.player_id else ErrorCode.BAD_USER_INPUT
    seat = move.seat
    if isinstance(move, RevealHand):
        if phase is not Phase.BIDDING:
            return ErrorCode.WRONG_PHASE
        return None if game.blind_nil_eligible(seat) else ErrorCode.NOT_ELIGIBLE
    wanted = {PlaceBid: Phase.BIDDING, PassCards: Phase.EXCHANGE, PlayCard: Phase.PLAYING}
    if phase is not wanted[type(move)]:
        return ErrorCode.WRONG_PHASE
    if game.turn is not seat:
        return ErrorCode.NOT_YOUR_TURN
    held = hand.hands[seat]
    if isinstance(move, PlaceBid):
        if move.kind is BidKind.TRICKS:
            if move.tricks is None or not 0 <= move.tricks <= 13:
                return ErrorCode.INVALID_BID
        elif move.tricks is not None:
            return ErrorCode.INVALID_BID
        withheld = game.blind_nil_eligible(seat)
        if withheld and move.kind is not BidKind.BLIND_NIL:
            return ErrorCode.INVALID_BID
        if move.kind is BidKind.BLIND_NIL and not withheld:
            return ErrorCode.NOT_ELIGIBLE
        return None
    if isinstance(move, PassCards):
        if len(move.cards) != 2 or move.cards[0] == move.cards[1]:
            return ErrorCode.BAD_USER_INPUT
        return None if all(c in held for c in move.cards) else ErrorCode.CARD_NOT_IN_HAND
    assert isinstance(move, PlayCard)
    if move.card not in held:
        return ErrorCode.CARD_NOT_IN_HAND
    led = hand.current[0][1].suit if hand.current else None
    if move.card not in rulebook_legal(held, led, not hand.tricks, hand.spades_broken):
        return ErrorCode.ILLEGAL_PLAY
    return None


# ----------------------------------------------------------------- properties


@FEW
@given(SEEDS)
def test_all_52_cards_always_accounted_for(seed: int) -> None:
    for game, _ in random_game(seed):
        assert cards_accounted(game) == FULL_DECK_COUNT


@FEW
@given(SEEDS)
def test_legal_plays_never_empty_on_a_turn(seed: int) -> None:
    for game, _ in random_game(seed):
        if game.phase is Phase.PLAYING:
            seat = game.turn
            assert seat is not None
            hand = game.hand
            legal = game.legal_plays(seat)
            assert legal
            led = hand.current[0][1].suit if hand.current else None
            assert set(legal) == rulebook_legal(
                hand.hands[seat], led, not hand.tricks, hand.spades_broken
            )
            for other in SEATS:
                if other is not seat:
                    assert game.legal_plays(other) == []


@FEW
@given(SEEDS)
def test_hands_always_sorted_and_13_tricks_per_hand(seed: int) -> None:
    for game, _ in random_game(seed):
        for held in game.hand.hands:
            assert held == sorted(held, key=sort_key)
    for finished in game.finished:
        state = finished.state
        assert len(state.tricks) == 13
        assert sum(state.tricks_won) == 13
        assert all(len(t.plays) == 4 for t in state.tricks)
        played = Counter(c for t in state.tricks for _, c in t.plays)
        assert played == FULL_DECK_COUNT


@FEW
@given(SEEDS)
def test_scores_equal_the_sum_of_hand_results(seed: int) -> None:
    game = finished_game(seed)
    scores, bags = [0, 0], [0, 0]
    for finished in game.finished:
        state = finished.state
        for team, result in zip(TEAMS, finished.results, strict=True):
            seats = team.seats
            bids = [state.bids[s] for s in seats]
            assert bids[0] is not None and bids[1] is not None
            later = max((0, 1), key=lambda i: state.bid_order.index(seats[i]))
            tricks = [state.tricks_won[s] for s in seats]
            points, bags_after = rulebook_points(bids, tricks, later, bags[team])
            assert (result.points, result.bags_after) == (points, bags_after)
            scores[team] += points
            bags[team] = bags_after
            assert result.score_after == scores[team]
        decided = any(s >= 250 or s <= -250 for s in scores) and scores[0] != scores[1]
        assert decided is (finished is game.finished[-1])
    assert game.scores == scores and game.bags == bags
    assert game.winner is not None and scores[game.winner] > scores[game.winner.other]


@FEW
@given(SEEDS)
def test_blind_nil_eligibility_fixed_at_each_deal(seed: int) -> None:
    for game, events in random_game(seed):
        kinds = {e.kind for e in events}
        if kinds & {EventKind.GAME_STARTED, EventKind.HAND_DEALT}:
            for seat in SEATS:
                team = seat.team
                behind = game.scores[team] <= game.scores[team.other] - 100
                assert game.blind_nil_eligible(seat) is behind
                assert (project(game, seat).hand is None) is behind
    for finished in game.finished:
        state = finished.state
        blind = [s for s in SEATS if (b := state.bids[s]) and b.kind is BidKind.BLIND_NIL]
        assert len({s.team for s in blind}) == len(blind)  # at most one per team
        if not blind:
            assert state.exchanges == []
            continue
        bidder = blind[0]  # only the team 100 behind can bid it: one team exchanges
        assert len(blind) == 1
        assert [(e.giver, e.receiver) for e in state.exchanges] == [
            (bidder, bidder.partner),
            (bidder.partner, bidder),
        ]
        received = set(state.exchanges[1].cards)
        assert received <= set(state.deal[bidder.partner])  # passed from the cards held before


@settings(max_examples=30, deadline=None)
@given(SEEDS)
def test_projections_never_contain_another_seats_cards(seed: int) -> None:
    for game, events in random_game(seed):
        assert_views_hide_other_cards(game)
        for event in events:
            assert event.card is None or event.kind is EventKind.CARD_PLAYED


@FEW
@given(SEEDS, st.integers(min_value=0, max_value=400), st.integers(min_value=0, max_value=2**32))
def test_snapshots_round_trip_and_play_on_identically(seed: int, at: int, later: int) -> None:
    games = random_game(seed)
    for i, (game, _) in enumerate(games):
        data = game_to_data(game)
        restored = game_from_data(data)
        assert game_to_data(restored) == data
        if i == at:
            break
    else:
        return
    if game.phase is Phase.GAME_OVER:
        return
    twins = [game, restored]
    rngs = [random.Random(later), random.Random(later)]
    while game.phase is not Phase.GAME_OVER:
        seat = game.turn
        assert seat is not None and restored.turn is seat
        moves = [random_move(g, seat, r) for g, r in zip(twins, rngs, strict=True)]
        assert moves[0] == moves[1]
        assert game.apply(moves[0]) == restored.apply(moves[1])
    assert game_to_data(restored) == game_to_data(game)


def _any_move(data: st.DataObject, game: Game) -> Move:
    seat = data.draw(st.sampled_from(SEATS))
    held = game.hand.hands[seat]
    own = held and data.draw(st.booleans())
    card = st.sampled_from(held) if own else st.sampled_from(FULL_DECK)
    kind = data.draw(st.sampled_from(["bid", "reveal", "pass", "play", "replace"]))
    if kind == "bid":
        bid_kind = data.draw(st.sampled_from(list(BidKind)))
        tricks = data.draw(st.one_of(st.none(), st.integers(min_value=-2, max_value=15)))
        return PlaceBid(seat, bid_kind, tricks)
    if kind == "reveal":
        return RevealHand(seat)
    if kind == "pass":
        return PassCards(seat, tuple(data.draw(st.lists(card, min_size=0, max_size=3))))
    if kind == "play":
        return PlayCard(seat, data.draw(card))
    return ReplacePlayer(seat, data.draw(st.sampled_from(["", Seat(seat).bot_id])))


@settings(max_examples=60, deadline=None)
@given(SEEDS, st.integers(min_value=0, max_value=300), st.data())
def test_any_move_is_refused_by_the_rulebook_order_or_accepted(
    seed: int, at: int, data: st.DataObject
) -> None:
    game = play_until(seed, at)
    for _ in range(5):
        move = _any_move(data, game)
        expected = rulebook_refusal(game, move)
        before = game_to_data(game)
        try:
            game.apply(move)
        except RuleError as exc:
            assert exc.code is expected, (move, exc)
            assert game_to_data(game) == before
        else:
            assert expected is None, move
            assert cards_accounted(game) == FULL_DECK_COUNT
