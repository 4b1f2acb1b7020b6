"""Hand-made situations for the bot heuristics: a seat's knowledge, spelled out."""

from __future__ import annotations

from collections.abc import Sequence

from app.rules.bidding import Bid, BidKind
from app.rules.bots import SeatKnowledge
from app.rules.cards import FULL_DECK, Card, Suit
from app.rules.game import Phase
from app.rules.play import legal_plays
from app.rules.seats import SEATS, Seat
from tests.rules.rules_helpers import BidValue, cards


def as_bid(value: BidValue | None) -> Bid | None:
    """A bid from its record value."""
    if value is None:
        return None
    if isinstance(value, int):
        return Bid(BidKind.TRICKS, value)
    return Bid(BidKind(value))


def situation(
    seat: Seat,
    hand: str,
    *,
    bids: Sequence[BidValue | None] = (3, 3, 3, 3),
    current: Sequence[tuple[Seat, str]] = (),
    played: str = "",
    tricks_won: Sequence[int] = (0, 0, 0, 0),
    voids: dict[Seat, str] | None = None,
    spades_broken: bool = True,
    scores: tuple[int, int] = (0, 0),
    bags: tuple[int, int] = (0, 0),
    phase: Phase = Phase.PLAYING,
    dealer: Seat = Seat.WEST,
    first_trick: bool = False,
) -> SeatKnowledge:
    """The knowledge of `seat` holding `hand`, with bids by seat value (NORTH first; bid
    in order from the dealer's left), the trick in progress and the cards already played
    in earlier tricks (`played`); `voids` maps a seat to suit letters it showed out of.
    It is not the first trick unless `first_trick`."""
    own = cards(hand)
    plays = tuple((s, Card.parse(c)) for s, c in current)
    done = cards(played)
    all_played = frozenset(done) | {c for _, c in plays}
    tricks_done = 0 if first_trick else max(1, len(done) // 4)
    led = plays[0][1].suit if plays else None
    legal = legal_plays(own, led, tricks_done == 0, spades_broken) if phase is Phase.PLAYING else []
    shown = voids or {}
    letters = {"S": Suit.SPADES, "H": Suit.HEARTS, "C": Suit.CLUBS, "D": Suit.DIAMONDS}
    order = tuple(s for s in _from(dealer.left) if bids[s] is not None)
    leader = plays[0][0] if plays else seat
    return SeatKnowledge(
        seat=seat,
        phase=phase,
        hand_number=1,
        dealer=dealer,
        hand=own,
        withheld=False,
        bids=tuple(as_bid(b) for b in bids),
        bid_order=order,
        tricks=(),
        current=plays,
        leader=leader,
        spades_broken=spades_broken,
        tricks_won=tuple(tricks_won),
        scores=scores,
        bags=bags,
        passed=(),
        received=(),
        turn=seat,
        legal=tuple(legal),
        played=all_played,
        voids=tuple(frozenset(letters[x] for x in shown.get(s, "")) for s in SEATS),
        tricks_done=tricks_done,
        counts=tuple(13 - tricks_done - (1 if any(p[0] is s for p in plays) else 0) for s in SEATS),
    )


def played_except(count: int, *kept: str) -> str:
    """`count` cards for the earlier tricks, none of the `kept` ones (space-separated)."""
    keep = {c for text in kept for c in cards(text)}
    return " ".join([c.code for c in FULL_DECK if c not in keep][:count])


def _from(first: Seat) -> list[Seat]:
    return [SEATS[(first + i) % 4] for i in range(4)]
