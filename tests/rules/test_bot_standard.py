"""The STANDARD bot, one heuristic at a time, each in a hand-made situation."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from app.rules.bidding import BidKind
from app.rules.bots import SeatKnowledge, basic_decide, basic_move
from app.rules.bots.standard import standard_bid, standard_play
from app.rules.game import Phase
from app.rules.seats import Seat
from tests.rules.bot_situations import played_except, situation
from tests.rules.test_properties import play_until

N, E, S, W = Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST
NO_BIDS = (None, None, None, None)


def _bid(
    hand: str, bids: tuple[object, ...] = NO_BIDS, seat: Seat = N
) -> tuple[BidKind, int | None]:
    k = situation(seat, hand, bids=bids, phase=Phase.BIDDING)  # type: ignore[arg-type]
    bid = standard_bid(k)
    return bid.kind, bid.tricks


def _play(k: SeatKnowledge) -> str:
    return standard_play(k).code


# ----------------------------------------------------------------------------- bidding


def test_standard_bids_sure_and_likely_tricks() -> None:
    strong = "AS KS QS 5S AH KH 4H AC 7C 3C 9D 5D 2D"  # 3 + 1 spade length... about 6
    weak = "4S 3S 9H 7H 5H 3H 8C 6C 4C 2C 9D 7D 4D"
    assert _bid(strong)[1] in (6, 7)
    assert _bid(weak) == (BidKind.TRICKS, 0) or _bid(weak)[0] is BidKind.NIL


def test_standard_counts_voids_and_singletons_for_ruffs() -> None:
    balanced = "9S 8S 7S AH 7H 4H 3H 9C 6C 3C 9D 6D 3D"
    void = "9S 8S 7S AH 7H 4H 3H 2H 9C 6C 3C 2C 10C"  # no diamonds: low spades ruff them
    assert _bid(void)[1] > _bid(balanced)[1]  # type: ignore[operator]


def test_standard_bids_nil_with_a_hand_that_can_stay_under() -> None:
    assert _bid("3S 2S 9H 7H 5H 3H 8C 6C 4C 2C 9D 7D 4D")[0] is BidKind.NIL


def test_standard_does_not_bid_nil_with_high_spades() -> None:
    assert _bid("AS 2S 9H 7H 5H 3H 8C 6C 4C 2C 9D 7D 4D")[0] is BidKind.TRICKS
    assert _bid("KS QS 2S 9H 7H 5H 8C 6C 4C 2C 9D 7D 4D")[0] is BidKind.TRICKS


def test_standard_never_bids_nil_beside_a_partner_nil() -> None:
    low = "3S 2S 9H 7H 5H 3H 8C 6C 4C 2C 9D 7D 4D"
    kind, tricks = _bid(low, bids=(None, 2, "NIL", 3))  # NORTH is second of its team
    assert kind is BidKind.TRICKS and tricks is not None and tricks >= 1


def test_standard_second_bidder_sets_team_total() -> None:
    hand = "AS KS 5S 4S AH 7H 4H 3H 9C 6C 3C 9D 6D"  # about 4 tricks
    _, alone = _bid(hand)
    kind, total = _bid(hand, bids=(None, 2, 3, 2))  # partner SOUTH bid 3 first
    assert kind is BidKind.TRICKS and alone is not None
    assert total == 3 + alone


def test_standard_second_bidder_keeps_the_table_total_believable() -> None:
    hand = "AS KS 5S 4S AH 7H 4H 3H 9C 6C 3C 9D 6D"  # about 4 tricks
    _, alone = _bid(hand)
    _, total = _bid(hand, bids=(None, 5, 3, 5))  # opponents bid 10 between them
    assert alone is not None and total is not None
    assert 3 <= total < 3 + alone


# ----------------------------------------------------------------------------- play


def test_standard_second_hand_low() -> None:
    k = situation(E, "KH 3H 9C", current=[(N, "5H")])
    assert _play(k) == "3H"


def test_standard_third_hand_high_with_the_cheapest_of_equal_cards() -> None:
    k = situation(S, "KH QH 2H 9C", current=[(N, "4H"), (E, "6H")])
    assert _play(k) == "QH"


def test_standard_wins_as_cheaply_as_possible() -> None:
    k = situation(W, "KH JH 10H 2H 9C", current=[(N, "9H"), (E, "4H"), (S, "5H")])
    assert _play(k) == "10H"


def test_standard_does_not_overtake_partners_winner() -> None:
    k = situation(W, "KH 2H 9C", current=[(N, "3H"), (E, "AH"), (S, "5H")])
    assert _play(k) == "2H"
    # Void in the suit: no trump on the partner's sure ace, a throw-away instead.
    k = situation(N, "5S 9C 4C", current=[(E, "3H"), (S, "AH"), (W, "5H")])
    assert _play(k) == "4C"


def test_standard_ruffs_an_opponents_winner_with_the_lowest_trump() -> None:
    k = situation(W, "QS 3S 9C 4C", current=[(N, "AH"), (E, "3H"), (S, "5H")], voids={W: "H"})
    assert _play(k) == "3S"
    k = situation(  # on the first trick no spade may be played: it throws a card instead
        W, "QS 3S 9C 4C", current=[(N, "AH"), (E, "3H"), (S, "5H")], first_trick=True
    )
    assert _play(k) == "4C"
    k = situation(W, "QS 3S 9C 4C", current=[(N, "AH"), (E, "3H"), (S, "5H")])
    assert _play(k) == "3S"


def test_standard_cashes_its_boss_cards_when_leading() -> None:
    k = situation(N, "AH 4H 7C 3C 5D", played="")
    assert _play(k) == "AH"


def test_standard_covers_partners_nil() -> None:
    bids = ("NIL", 3, 4, 3)  # NORTH nil, SOUTH covers
    k = situation(S, "AH 3H 9C", bids=bids, current=[(W, "5H"), (N, "KH")])
    assert _play(k) == "AH"  # partner's king is winning: overtake it
    k = situation(S, "AH 3H 9C", bids=bids, current=[(E, "5H")])
    assert _play(k) == "AH"  # partner plays after me: win high, so it can duck


def test_standard_nil_bidder_ducks_with_its_highest_losing_card() -> None:
    k = situation(N, "QH 9H 2H 8C", bids=("NIL", 3, 4, 3), current=[(E, "JH")])
    assert _play(k) == "9H"


def test_standard_attacks_opponents_nil() -> None:
    bids = (3, "NIL", 4, 3)  # EAST bid nil
    # The nil bidder's 9 is winning: stay under it.
    k = situation(S, "KH 5H 9C", bids=bids, current=[(N, "3H"), (E, "9H")])
    assert _play(k) == "5H"
    # Leading: low, in a suit the nil bidder still holds.
    k = situation(N, "KH 5H 2C 9D", bids=bids, voids={E: "C"})
    assert _play(k) == "5H"


def _north_fourth_to_hearts(
    bids: tuple[int, int, int, int], tricks_won: tuple[int, int, int, int], played: int
) -> str:
    """NORTH's card, holding KH 2H 9C, last to a heart trick EAST 4, SOUTH 5, WEST 9,
    after `played` other cards of the hand."""
    trick = [(E, "4H"), (S, "5H"), (W, "9H")]
    earlier = played_except(played, "KH 2H 9C 4H 5H 9H")
    k = situation(N, "KH 2H 9C", bids=bids, tricks_won=tricks_won, current=trick, played=earlier)
    return _play(k)


def test_standard_avoids_bags_once_contract_safe() -> None:
    # NORTH-SOUTH bid 4 and hold 3: NORTH wins the trick as cheaply as it can.
    assert _north_fourth_to_hearts((4, 3, 4, 3), (2, 2, 1, 1), played=24) == "KH"
    # They bid 3 and hold 3, the opponents made theirs: no bag.
    assert _north_fourth_to_hearts((2, 3, 3, 3), (2, 2, 1, 1), played=24) == "2H"


def test_standard_sets_opponents_when_it_pays() -> None:
    # 4 tricks left; NORTH-SOUTH made 2, EAST-WEST bid 6 and hold 3: setting them takes 2.
    assert _north_fourth_to_hearts((2, 3, 2, 6), (5, 1, 1, 2), played=36) == "KH"
    # Holding 5 of 6 they need one of 4: out of reach, so no bag for nothing.
    assert _north_fourth_to_hearts((2, 3, 2, 6), (3, 3, 1, 2), played=36) == "2H"


# ----------------------------------------------------------------------------- basic


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=0, max_value=2**63 - 1), st.integers(min_value=0, max_value=400))
def test_basic_decided_from_knowledge_is_the_basic_bot(seed: int, moves: int) -> None:
    game = play_until(seed, moves)
    seat = game.turn
    if seat is None:
        return
    a = basic_move(game, seat, random.Random(seed))
    b = basic_decide(SeatKnowledge.of(game, seat), random.Random(seed))
    assert a == b
