"""Determinized worlds and fast playouts for the EXPERT search.

A world is one full assignment of the unseen cards to the other seats that
agrees with everything the deciding seat knows (voids shown, cards known to
be in its partner's hand). A playout finishes the hand in that world with
STANDARD play for all four seats, each seat deciding from its own knowledge
of the world, and scores it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from app.rules.bidding import Bid, team_target
from app.rules.bots.knowledge import Play, SeatKnowledge
from app.rules.bots.reading import current_best, hand_strength, nil_risk
from app.rules.bots.standard import standard_bid, standard_play
from app.rules.cards import Card, Suit
from app.rules.game import Phase
from app.rules.play import legal_plays
from app.rules.scoring import score_team
from app.rules.seats import SEATS, TEAMS, Seat

BAG_VALUE = 0  # extra weight of a bag against the team, beyond the hand's points. Its
# long-run cost (100 every 10) argues for 10, but in tournaments any weight made EXPERT
# bid up and get set more often: the playouts' rough play overrates bidding up
World = list[list[Card]]  # every seat's cards, by seat value
_EMPTY: frozenset[Suit] = frozenset()


def played_by(k: SeatKnowledge) -> list[list[Card]]:
    """The cards each seat has played this hand (public)."""
    out: list[list[Card]] = [[], [], [], []]
    for trick in k.tricks:
        for seat, card in trick.plays:
            out[seat].append(card)
    for seat, card in k.current:
        out[seat].append(card)
    return out


def sample_world(k: SeatKnowledge, rng: random.Random, tries: int = 12) -> World | None:
    """One deal of the unseen cards consistent with the seat's knowledge, or None when
    the random assignment kept running into the voids (rare)."""
    me = k.seat
    known = k.partner_known
    unseen = k.unseen()
    need = list(k.counts)
    need[me] = 0
    need[me.partner] -= len(known)
    others = [s for s in SEATS if s is not me]
    eligible = {s: [o for o in others if s not in k.voids[o]] for s in Suit}
    for _ in range(tries):
        cards = list(unseen)
        rng.shuffle(cards)
        cards.sort(key=lambda c: len(eligible[c.suit]))  # the most constrained first
        room = list(need)
        world: World = [[], [], [], []]
        world[me] = list(k.hand)
        world[me.partner].extend(known)
        for card in cards:
            options = [o for o in eligible[card.suit] if room[o] > 0]
            if not options:
                break
            pick = rng.randrange(sum(room[o] for o in options))
            for o in options:
                pick -= room[o]
                if pick < 0:
                    world[o].append(card)
                    room[o] -= 1
                    break
        else:
            return world
    return None


def world_weight(k: SeatKnowledge, world: World, history: list[list[Card]]) -> float:
    """How well a world agrees with the bids (soft evidence): a seat's whole hand should
    be worth about its bid, a nil bidder's hand should be one that can stay under."""
    weight = 1.0
    me = k.seat
    for seat in SEATS:
        if seat is me or k.bids[seat] is None:
            continue
        dealt = world[seat] + history[seat]
        if len(dealt) != 13:
            continue  # exchanges moved cards: the evidence is muddled, skip it
        bid = k.bids[seat]
        assert bid is not None
        if bid.tricks is None:
            if bid.kind.value == "NIL":
                weight *= math.exp(-1.5 * max(0.0, nil_risk(dealt) - 0.5))
            continue
        own = _own_share(k, seat, bid)
        gap = hand_strength(dealt) - own
        weight *= math.exp(-(gap * gap) / 4.5)
    return weight


def _own_share(k: SeatKnowledge, seat: Seat, bid: Bid) -> float:
    """The tricks a seat's own bid claims (the second bidder bids the team total)."""
    partner_bid = k.bids[seat.partner]
    tricks = bid.tricks or 0
    partner_first = partner_bid is not None and (
        k.bid_order.index(seat.partner) < k.bid_order.index(seat)
    )
    if partner_bid is not None and partner_bid.tricks is not None and partner_first:
        return max(0.0, tricks - partner_bid.tricks)
    return float(tricks)


class Playout:
    """The rest of a hand in one world, played by STANDARD from every seat's own view."""

    __slots__ = (
        "bags",
        "bid_order",
        "bids",
        "broken",
        "current",
        "done",
        "hands",
        "leader",
        "number",
        "played",
        "scores",
        "voids",
        "won",
    )

    def __init__(self, k: SeatKnowledge, world: World) -> None:
        self.hands = [list(h) for h in world]
        for h in self.hands:
            h.sort(key=lambda c: (c.suit, -c.rank))
        self.current: list[Play] = list(k.current)
        self.leader = k.leader
        self.done = k.tricks_done
        # Tuples, rebuilt on the rare change (a trick won, a void shown), so that the
        # knowledge object built for every card of a playout can share them as they are.
        self.won: tuple[int, ...] = tuple(k.tricks_won)
        self.broken = k.spades_broken
        self.played = set(k.played)
        self.voids: tuple[frozenset[Suit], ...] = tuple(k.voids)
        self.bids = k.bids
        self.bid_order = k.bid_order
        self.scores = k.scores
        self.bags = k.bags
        self.number = k.hand_number

    def legal(self, seat: Seat) -> list[Card]:
        """`seat`'s legal plays now."""
        led = self.current[0][1].suit if self.current else None
        return legal_plays(self.hands[seat], led, self.done == 0, self.broken)

    def knowledge(self, seat: Seat, legal: list[Card] | None = None) -> SeatKnowledge:
        """What `seat` knows in this world (without the trick history, which STANDARD
        play does not read); `legal` when already worked out."""
        hand = self.hands[seat]
        if legal is None:
            legal = self.legal(seat)
        return SeatKnowledge(
            seat=seat,
            phase=Phase.PLAYING,
            hand_number=self.number,
            dealer=seat,
            hand=tuple(hand),
            withheld=False,
            bids=self.bids,
            bid_order=self.bid_order,
            tricks=(),
            current=tuple(self.current),
            leader=self.leader,
            spades_broken=self.broken,
            tricks_won=self.won,
            scores=self.scores,
            bags=self.bags,
            passed=(),
            received=(),
            turn=seat,
            legal=tuple(legal),
            played=frozenset(self.played),
            voids=self.voids,
            tricks_done=self.done,
            counts=tuple(map(len, self.hands)),
        )

    def play(self, seat: Seat, card: Card) -> None:
        """Play `card` from `seat` (legal by construction)."""
        self.hands[seat].remove(card)
        current = self.current
        if current:
            led = current[0][1].suit
            if card.suit != led:
                voids = self.voids
                if led not in voids[seat]:
                    self.voids = (*voids[:seat], voids[seat] | {led}, *voids[seat + 1 :])
                if card.suit is Suit.SPADES:
                    self.broken = True
        current.append((seat, card))
        self.played.add(card)
        if len(current) == 4:
            winner, _ = current_best(current)
            won = self.won
            self.won = (*won[:winner], won[winner] + 1, *won[winner + 1 :])
            self.leader = winner
            self.done += 1
            self.current = []

    def turn(self) -> Seat:
        """The seat to play next."""
        if not self.current:
            return self.leader
        return self.current[-1][0].left

    def finish(self) -> None:
        """Play the hand out with STANDARD play."""
        while self.done < 13:
            seat = self.turn()
            legal = self.legal(seat)
            # A forced card is STANDARD's play without a look at the rest (no knowledge
            # object to build: the last trick, and every singleton follow).
            card = legal[0] if len(legal) == 1 else standard_play(self.knowledge(seat, legal))
            self.play(seat, card)

    def margin(self, seat: Seat) -> int:
        """The hand's value to `seat`'s team minus the opponents'. A bag counts what it
        costs in the long run (its point now, less a tenth of the 100-point penalty it
        brings closer) instead of the penalty it happens to trigger in this hand."""
        points = [0, 0]
        for team in TEAMS:
            seats = team.seats
            order = [s for s in self.bid_order if s.team is team]
            target = team_target(self.bids[order[0]], self.bids[order[1]])
            bids = [self.bids[s] for s in seats]
            result = score_team(
                self.number,
                team,
                [b for b in bids if b is not None],
                [self.won[s] for s in seats],
                target,
                self.scores[team],
                self.bags[team],
            )
            points[team] = result.points + result.bag_penalty - BAG_VALUE * result.bags
        mine = seat.team
        return points[mine] - points[mine.other]


def standard_bid_in(world: World, seat: Seat, k: SeatKnowledge, bids: Sequence[Bid | None]) -> Bid:
    """STANDARD's bid for `seat` holding its world hand, seeing `bids` so far."""
    view = SeatKnowledge(
        seat=seat,
        phase=Phase.BIDDING,
        hand_number=k.hand_number,
        dealer=k.dealer,
        hand=tuple(world[seat]),
        withheld=False,
        bids=tuple(bids),
        bid_order=(),
        tricks=(),
        current=(),
        leader=k.leader,
        spades_broken=False,
        tricks_won=(0, 0, 0, 0),
        scores=k.scores,
        bags=k.bags,
        passed=(),
        received=(),
        turn=seat,
        legal=(),
        played=frozenset(),
        voids=(_EMPTY,) * 4,
        tricks_done=0,
        counts=(13, 13, 13, 13),
    )
    return standard_bid(view)
