"""The EXPERT bot: determinized search over STANDARD playouts.

For each decision it samples deals of the unseen cards that agree with its
seat's knowledge (voids shown, its partner's exchanged cards, the bids as
soft evidence), plays each candidate move out to the end of the hand in every
sampled deal with STANDARD play, and picks the move with the best expected
score margin. The same deals serve every candidate (common random numbers),
so the comparison is between moves, not between lucky and unlucky deals.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..bidding import NIL, Bid, BidKind
from ..cards import Card
from ..game import Phase
from ..moves import Move, PassCards, PlaceBid, PlayCard, RevealHand
from .basic import pass_for
from .knowledge import SeatKnowledge
from .playout import Playout, World, played_by, sample_world, standard_bid_in, world_weight
from .reading import cheapest_equal, nil_risk
from .standard import standard_bid, standard_play

BLIND_NIL_BEHIND = 150  # bid BLIND_NIL when this far behind (and eligible)
NIL_CANDIDATE_RISK = 2.0  # consider NIL (by search) below this nil_risk


@dataclass(frozen=True, slots=True)
class ExpertBudget:
    """How much thinking one decision may take: at most `playouts` playouts and at most
    `seconds` of wall-clock time (whichever ends first), and at least `min_worlds`
    sampled deals when time allows."""

    playouts: int = 240
    seconds: float = 0.1
    min_worlds: int = 6


DEFAULT_BUDGET = ExpertBudget()
clock: Callable[[], float] = time.perf_counter  # module-level so a test can drive it


def expert_move(k: SeatKnowledge, rng: random.Random, budget: ExpertBudget | None = None) -> Move:
    """The EXPERT bot's move for the seat on turn."""
    budget = budget or DEFAULT_BUDGET
    if k.phase is Phase.BIDDING:
        if k.withheld:
            if wants_blind_nil(k):
                return PlaceBid(k.seat, BidKind.BLIND_NIL)
            return RevealHand(k.seat)
        return PlaceBid.of(k.seat, expert_bid(k, rng, budget))
    if k.phase is Phase.EXCHANGE:
        return PassCards(k.seat, pass_for(k.hand, k.bids[k.seat]))
    return PlayCard(k.seat, expert_play(k, rng, budget))


def wants_blind_nil(k: SeatKnowledge) -> bool:
    """BLIND_NIL is a gamble worth taking only far behind (the partner must not have bid
    nil: one per team is the rule, and a double nil is hopeless)."""
    team = k.seat.team
    behind = k.scores[team.other] - k.scores[team]
    partner_bid = k.bids[k.seat.partner]
    if partner_bid is not None and partner_bid.tricks is None:
        return False
    return behind >= BLIND_NIL_BEHIND


def candidates(k: SeatKnowledge) -> list[Card]:
    """The legal plays worth comparing: one card from each run of equal cards."""
    seen: set[Card] = set()
    out: list[Card] = []
    for card in k.legal:
        low = cheapest_equal(k, card, k.legal)
        if low not in seen:
            seen.add(low)
            out.append(low)
    return out


def expert_play(k: SeatKnowledge, rng: random.Random, budget: ExpertBudget) -> Card:
    """The card with the best mean margin over sampled deals (STANDARD's card on ties)."""
    options = candidates(k)
    default = standard_play(k)
    if len(options) == 1:
        return options[0]
    history = played_by(k)
    deadline = clock() + budget.seconds
    totals = dict.fromkeys(options, 0.0)
    weights = 0.0
    playouts = 0
    worlds = 0
    while playouts + len(options) <= budget.playouts:
        if worlds >= budget.min_worlds and clock() > deadline:
            break
        world = sample_world(k, rng)
        worlds += 1
        if world is None:
            continue
        weight = world_weight(k, world, history)
        for card in options:
            playout = Playout(k, world)
            playout.play(k.seat, card)
            playout.finish()
            totals[card] += weight * playout.margin(k.seat)
            playouts += 1
        weights += weight
        if clock() > deadline and worlds >= budget.min_worlds:
            break
    if weights <= 0.0:
        return default
    bonus = 0.25 * weights  # a quarter point per deal: STANDARD's card wins near-ties
    return max(options, key=lambda c: totals[c] + (bonus if c == default else 0.0))


def expert_bid(k: SeatKnowledge, rng: random.Random, budget: ExpertBudget) -> Bid:
    """STANDARD's bid, one more, one less, and NIL when the hand might stay under: each
    played out over sampled deals (the later bidders bidding STANDARD), best mean kept."""
    base = standard_bid(k)
    options: list[Bid] = [base]
    if base.tricks is not None:
        partner_bid = k.bids[k.seat.partner]
        low = 1 if partner_bid is not None and partner_bid.tricks is not None else 0
        for tricks in (base.tricks - 1, base.tricks + 1):
            if low <= tricks <= 13:
                options.append(Bid(BidKind.TRICKS, tricks))
        partner_nil = partner_bid is not None and partner_bid.tricks is None
        if not partner_nil and nil_risk(k.hand) < NIL_CANDIDATE_RISK:
            options.append(NIL)
    deadline = clock() + budget.seconds
    totals = [0.0] * len(options)
    worlds = 0
    playouts = 0
    while playouts + len(options) <= budget.playouts:
        world = sample_world(k, rng)
        worlds += 1
        if world is not None:
            for index, bid in enumerate(options):
                totals[index] += _bid_playout(k, world, bid)
                playouts += 1
        if clock() > deadline and worlds >= budget.min_worlds:
            break
    best = max(range(len(options)), key=lambda i: totals[i] + (0.5 * worlds if i == 0 else 0))
    return options[best]


def _bid_playout(k: SeatKnowledge, world: World, bid: Bid) -> int:
    """The margin of bidding `bid` in `world`: the later seats bid STANDARD, then the
    hand is played out by STANDARD (an exchange after a BLIND_NIL is not simulated)."""
    bids = list(k.bids)
    order = list(k.bid_order)
    bids[k.seat] = bid
    order.append(k.seat)
    seat = k.seat.left
    while len(order) < 4:
        bids[seat] = standard_bid_in(world, seat, k, bids)
        order.append(seat)
        seat = seat.left
    playout = Playout(k, world)
    playout.bids = tuple(bids)
    playout.bid_order = tuple(order)
    playout.leader = k.dealer.left
    playout.finish()
    return playout.margin(k.seat)


__all__ = ["DEFAULT_BUDGET", "ExpertBudget", "expert_bid", "expert_move", "expert_play"]
