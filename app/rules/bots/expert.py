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
    """How much thinking one decision may take: at most `playouts` playouts, and sampled
    deals until `seconds` have passed (at least `min_worlds` of them, unless that would
    take past `hard_factor` times `seconds`: a deal cut short is dropped whole)."""

    playouts: int = 400
    seconds: float = 0.05
    min_worlds: int = 4
    hard_factor: float = 2.0


DEFAULT_BUDGET = ExpertBudget()
clock: Callable[[], float] = time.perf_counter  # module-level so a test can drive it
NIL_EDGE = 12.0  # NIL must beat the best number by this many points per deal (its
# outcomes swing by 100+, so a noisy estimate must not pick it by luck)


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

    def evaluate(world: World) -> list[float]:
        weight = world_weight(k, world, history)
        scores = []
        for card in options:
            playout = Playout(k, world)
            playout.play(k.seat, card)
            playout.finish()
            scores.append(weight * playout.margin(k.seat))
        scores.append(weight)
        return scores

    found = _search(k, rng, budget, len(options), evaluate)
    if found is None or found[0][-1] <= 0.0:
        return default
    totals = found[0]
    bonus = 0.5 * totals[-1]  # half a point per deal: STANDARD's card wins near-ties
    best = max(
        range(len(options)), key=lambda i: totals[i] + (bonus if options[i] == default else 0)
    )
    return options[best]


def _search(
    k: SeatKnowledge,
    rng: random.Random,
    budget: ExpertBudget,
    width: int,
    evaluate: Callable[[World], list[float]],
) -> tuple[list[float], int] | None:
    """Sum `evaluate` over sampled deals within the budget, and count the deals (None if
    no deal was found)."""
    # The clock is read after each deal: one that ran past the hard stop is dropped.
    started = clock()
    soft = started + budget.seconds
    hard = started + budget.seconds * budget.hard_factor
    totals: list[float] | None = None
    worlds = 0
    counted = 0
    playouts = 0
    while playouts + width <= budget.playouts:
        now = clock()
        if now > hard or (now > soft and worlds >= budget.min_worlds):
            break
        world = sample_world(k, rng)
        if world is None:
            worlds += 1
            continue
        scores = evaluate(world)
        playouts += width
        if clock() > hard and worlds >= 1:
            break  # this deal ran past the hard stop: drop it
        worlds += 1
        counted += 1
        totals = scores if totals is None else [a + b for a, b in zip(totals, scores, strict=True)]
    return (totals, counted) if totals is not None else None


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

    def evaluate(world: World) -> list[float]:
        return [float(_bid_playout(k, world, bid)) for bid in options]

    found = _search(k, rng, budget, len(options), evaluate)
    if found is None:
        return base
    totals, deals = found
    numbers = [i for i, bid in enumerate(options) if bid.tricks is not None]
    if not numbers:
        return base
    best = max(numbers, key=lambda i: totals[i] + (0.5 * deals if i == 0 else 0))
    nil_searched = options[-1] is NIL and len(numbers) < len(options)
    if nil_searched and totals[-1] > totals[best] + NIL_EDGE * deals:
        return NIL
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
