"""What one seat knows: the only input a bot's decision gets (fair by construction).

`SeatKnowledge.of(game, seat)` copies out of a `Game` exactly what a human in
that seat could know: its own cards (none while withheld for blind nil), the
bids, every card played and by whom, the voids those plays showed, the
scores and bags, and the cards of an exchange it took part in. Never another
seat's unplayed cards, never the deal, never the seed. Two games that differ
only in other seats' unplayed cards give equal knowledge objects.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.rules.bidding import Bid
from app.rules.cards import FULL_DECK, Card, Suit
from app.rules.game import Game, Phase, Trick
from app.rules.play import legal_plays
from app.rules.seats import Seat

_SPADES = Suit.SPADES
_NO_VOIDS: frozenset[Suit] = frozenset()
Play = tuple[Seat, Card]


@dataclass(frozen=True, slots=True)
class SeatKnowledge:
    """Everything `seat` may know about the game now. Immutable and comparable.

    `tricks` is the public history of this hand; the derived fields (`played`,
    `voids`, `tricks_done`) summarise it for quick decisions. A search's playouts
    build knowledge objects without the history (`tricks` empty): the play
    heuristics read only the derived fields.
    """

    seat: Seat
    phase: Phase
    hand_number: int
    dealer: Seat
    hand: tuple[Card, ...]  # own cards (empty while withheld for blind nil)
    withheld: bool  # own cards unseen: BLIND_NIL still possible
    bids: tuple[Bid | None, ...]  # by seat value
    bid_order: tuple[Seat, ...]
    tricks: tuple[Trick, ...]  # finished tricks of this hand
    current: tuple[Play, ...]  # the trick in progress
    leader: Seat
    spades_broken: bool
    tricks_won: tuple[int, ...]  # by seat value
    scores: tuple[int, int]  # by team value
    bags: tuple[int, int]
    passed: tuple[Card, ...]  # the cards this seat passed in an exchange (to its partner)
    received: tuple[Card, ...]  # the cards this seat received in an exchange
    turn: Seat | None
    legal: tuple[Card, ...]  # this seat's legal plays now (empty unless it is to play)
    played: frozenset[Card]  # every card played this hand (tricks and current)
    voids: tuple[frozenset[Suit], ...]  # suits each seat has shown it no longer holds
    tricks_done: int
    counts: tuple[int, ...]  # cards each seat still holds

    @classmethod
    def of(cls, game: Game, seat: Seat) -> SeatKnowledge:
        """The knowledge of `seat` in `game` (built by the rules core, read-only)."""
        hand = game.hand
        withheld = hand.withheld[seat]
        passed: tuple[Card, ...] = ()
        received: tuple[Card, ...] = ()
        for exchange in hand.exchanges:
            if exchange.giver is seat:
                passed = exchange.cards
            elif exchange.receiver is seat and len(hand.exchanges) == 2:
                # The cards arrive once both partners have passed (they are then in the hand).
                received = exchange.cards
        voids: list[set[Suit]] = [set(), set(), set(), set()]
        played: set[Card] = set()
        counts = [len(h) for h in hand.hands]  # public: 13 minus the cards each seat played
        broken = False
        for number, trick in enumerate(hand.tricks):
            broken = _note_trick(trick.plays, number == 0, broken, voids, played)
        _note_trick(tuple(hand.current), not hand.tricks, broken, voids, played)
        if game.phase is Phase.EXCHANGE:
            counts = [13] * 4  # mid-exchange, hand sizes are in flux; publicly all hold 13
        turn = game.turn
        legal: tuple[Card, ...] = ()
        if turn is seat and game.phase is Phase.PLAYING:
            led = hand.current[0][1].suit if hand.current else None
            legal = tuple(legal_plays(hand.hands[seat], led, not hand.tricks, hand.spades_broken))
        return cls(
            seat=seat,
            phase=game.phase,
            hand_number=hand.number,
            dealer=hand.dealer,
            hand=() if withheld else tuple(hand.hands[seat]),
            withheld=withheld,
            bids=tuple(hand.bids),
            bid_order=tuple(hand.bid_order),
            tricks=tuple(hand.tricks),
            current=tuple(hand.current),
            leader=hand.leader,
            spades_broken=hand.spades_broken,
            tricks_won=tuple(hand.tricks_won),
            scores=(game.scores[0], game.scores[1]),
            bags=(game.bags[0], game.bags[1]),
            passed=passed,
            received=received,
            turn=turn,
            legal=legal,
            played=frozenset(played),
            voids=tuple(frozenset(v) if v else _NO_VOIDS for v in voids),
            tricks_done=len(hand.tricks),
            counts=tuple(counts),
        )

    @property
    def partner_known(self) -> frozenset[Card]:
        """Cards known to be in the partner's hand: those passed to it, not yet played."""
        return frozenset(c for c in self.passed if c not in self.played)

    def unseen(self) -> list[Card]:
        """The cards whose holder this seat does not know (in other seats' hands)."""
        known = set(self.hand) | self.played | self.partner_known
        return [c for c in FULL_DECK if c not in known]


def _note_trick(
    plays: tuple[Play, ...],
    first: bool,
    broken: bool,
    voids: list[set[Suit]],
    played: set[Card],
) -> bool:
    """Record the cards of a trick and the voids they show; returns whether spades are
    broken after it.

    A seat that does not follow the led suit is void in it. A seat that may only play
    a spade because it holds nothing else (a spade lead before spades are broken, a
    spade discard on the first trick) shows it holds spades only.
    """
    if not plays:
        return broken
    led = plays[0][1].suit
    for position, (who, card) in enumerate(plays):
        played.add(card)
        if card.suit is _SPADES:
            if (position == 0 and (first or not broken)) or (first and led is not _SPADES):
                voids[who].update(_SIDE_SUITS)
            if led is not _SPADES:
                broken = True
        if card.suit != led:
            voids[who].add(led)
    return broken


_SIDE_SUITS = (Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)

__all__ = ["Play", "SeatKnowledge"]
