"""Bot policies: the rulebook's basic bot, and a uniformly random one for testing.

A policy picks the next move for a seat that has to act. Both only use what
that seat may see (its own hand, public bids, the trick), never other hands.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from enum import StrEnum
from itertools import combinations

from app.rules.bidding import MAX_TRICKS, Bid, BidKind
from app.rules.bots.knowledge import SeatKnowledge
from app.rules.cards import Card, Suit
from app.rules.game import Game, Phase
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, RevealHand
from app.rules.seats import Seat

Policy = Callable[[Game, Seat, random.Random], Move]

# Module globals: an enum member lookup (`Phase.BIDDING`) is slow on Python 3.11.
_BIDDING, _EXCHANGE = Phase.BIDDING, Phase.EXCHANGE


class PolicyName(StrEnum):
    """The policies `spades simulate` offers."""

    BASIC = "basic"
    RANDOM = "random"


def basic_bid(game: Game, seat: Seat) -> int:
    """The basic bot's bid: its spade count; as second bidder, the team total (max 13)."""
    hand = game.hand
    spades = sum(1 for c in hand.hands[seat] if c.suit is Suit.SPADES)
    partner_bid = hand.bids[seat.partner]
    if partner_bid is None or partner_bid.tricks is None:
        return spades
    return min(MAX_TRICKS, partner_bid.tricks + spades)


def exchange_cards(game: Game, seat: Seat) -> tuple[Card, Card]:
    """The basic bot's pass: the blind nil bidder's seat passes its two highest cards
    (spades first); the partner passes its two lowest (non-spades first)."""
    return pass_for(game.hand.hands[seat], game.hand.bids[seat])


def pass_for(held: Sequence[Card], bid: Bid | None) -> tuple[Card, Card]:
    """The two cards a seat holding `held` passes, given its own bid (see exchange_cards)."""
    if bid is not None and bid.kind is BidKind.BLIND_NIL:
        ranked = sorted(held, key=lambda c: (c.suit is not Suit.SPADES, -c.rank, c.suit))
    else:
        ranked = sorted(held, key=lambda c: (c.suit is Suit.SPADES, c.rank, c.suit))
    return ranked[0], ranked[1]


def basic_move(game: Game, seat: Seat, rng: random.Random) -> Move:
    """The reference bot of docs/rules.md. Never bids NIL or BLIND_NIL."""
    if game.phase is _BIDDING:
        if game.hand.withheld[seat]:
            return RevealHand(seat)
        return PlaceBid(seat, BidKind.TRICKS, basic_bid(game, seat))
    if game.phase is _EXCHANGE:
        return PassCards(seat, exchange_cards(game, seat))
    return PlayCard(seat, rng.choice(game.legal_plays(seat)))


def basic_decide(k: SeatKnowledge, rng: random.Random) -> Move:
    """`basic_move` decided from the seat's knowledge alone: the same move, drawing the
    same random numbers (its legal plays are in the same hand order)."""
    seat = k.seat
    if k.phase is _BIDDING:
        if k.withheld:
            return RevealHand(seat)
        spades = sum(1 for c in k.hand if c.suit is Suit.SPADES)
        partner_bid = k.bids[seat.partner]
        if partner_bid is None or partner_bid.tricks is None:
            return PlaceBid(seat, BidKind.TRICKS, spades)
        return PlaceBid(seat, BidKind.TRICKS, min(MAX_TRICKS, partner_bid.tricks + spades))
    if k.phase is _EXCHANGE:
        return PassCards(seat, pass_for(k.hand, k.bids[seat]))
    return PlayCard(seat, rng.choice(k.legal))


def random_move(game: Game, seat: Seat, rng: random.Random) -> Move:
    """Every decision uniform among all legal options (NIL, BLIND_NIL, reveals included)."""
    hand = game.hand
    if game.phase is _BIDDING:
        if hand.withheld[seat]:
            options: list[Move] = [RevealHand(seat), PlaceBid(seat, BidKind.BLIND_NIL)]
            return rng.choice(options)
        if rng.randrange(MAX_TRICKS + 2) == MAX_TRICKS + 1:
            return PlaceBid(seat, BidKind.NIL)
        return PlaceBid(seat, BidKind.TRICKS, rng.randrange(MAX_TRICKS + 1))
    if game.phase is _EXCHANGE:
        pairs = list(combinations(hand.hands[seat], 2))
        return PassCards(seat, rng.choice(pairs))
    return PlayCard(seat, rng.choice(game.legal_plays(seat)))


POLICIES: dict[PolicyName, Policy] = {
    PolicyName.BASIC: basic_move,
    PolicyName.RANDOM: random_move,
}
