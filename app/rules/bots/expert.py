"""The EXPERT bot: determinized search over STANDARD playouts.

For each decision it samples deals of the unseen cards that agree with its
seat's knowledge (voids shown, its partner's exchanged cards, the bids as
soft evidence), plays each candidate move out to the end of the hand in every
sampled deal with STANDARD play, and picks the move with the best expected
score margin. The same deals serve every candidate (common random numbers),
so the comparison is between moves, not between lucky and unlucky deals.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from app.rules.bidding import Bid, BidKind
from app.rules.bots.basic import pass_for
from app.rules.bots.knowledge import SeatKnowledge
from app.rules.bots.playout import (
    Playout,
    World,
    played_by,
    sample_world,
    standard_bid_in,
    world_weight,
)
from app.rules.bots.reading import cheapest_equal, hand_strength
from app.rules.bots.standard import standard_bid, standard_play
from app.rules.cards import Card
from app.rules.game import Phase
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, RevealHand

BLIND_NIL_BEHIND = 200  # bid BLIND_NIL only this far behind (and eligible) ...
BLIND_NIL_THEIRS = 150  # ... with the opponents this close to winning: a comeback gamble


class BudgetClock(Enum):
    """What a budget's seconds count. WALL: elapsed time, what a player waits for (the
    server). CPU: the deciding thread's own CPU time, so the same budget buys the same
    thinking on a loaded machine as on an idle core (tournaments measure strength, and
    a shared machine must not weaken EXPERT)."""

    WALL = "wall"
    CPU = "cpu"


@dataclass(frozen=True, slots=True)
class ExpertBudget:
    """How much thinking one decision may take: at most `playouts` playouts, and sampled
    deals until `seconds` have passed on its `clock` (at least `min_worlds` of them,
    unless that would take past `hard_factor` times `seconds`: a deal cut short is
    dropped whole)."""

    playouts: int = 400
    seconds: float = 0.05
    min_worlds: int = 4
    hard_factor: float = 2.0
    clock: BudgetClock = BudgetClock.WALL


DEFAULT_BUDGET = ExpertBudget()
clock: Callable[[], float] = time.perf_counter  # module-level so a test can drive it


def budget_clock(budget: ExpertBudget) -> Callable[[], float]:
    """The clock that `budget`'s seconds are read on."""
    return time.thread_time if budget.clock is BudgetClock.CPU else clock


PLAY_EDGE = 1.0  # points per deal a card must beat STANDARD's card by (plus noise)
BASE_EDGE = 3.0  # points per deal another number must beat STANDARD's bid by
NIL_EDGE = 12.0  # a number must beat STANDARD's NIL by this many points per deal (NIL's
# outcomes swing by 100+: a noisy estimate must not overturn a sound NIL by luck)


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
    return behind >= BLIND_NIL_BEHIND and k.scores[team.other] >= BLIND_NIL_THEIRS


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
        return scores

    rows = _search(k, rng, budget, len(options), evaluate)
    standard = options.index(cheapest_equal(k, default, k.legal))  # its run's card
    chosen = paired_best(rows, standard, PLAY_EDGE)
    return default if chosen == standard else options[chosen]


def paired_best(rows: list[list[float]], default: int, edge: float) -> int:
    """The option to take, given its score in each sampled deal (`rows`, one list per
    deal, the same deals for every option): the default unless another option beats it
    by more than `edge` points per deal plus one standard error of the paired difference.
    Choosing the raw best mean would pick noise: outcomes swing by 100 points and more."""
    n = len(rows)
    if n < 2:
        return default
    best, best_mean = default, 0.0
    for option in range(len(rows[0])):
        if option == default:
            continue
        diffs = [row[option] - row[default] for row in rows]
        mean = sum(diffs) / n
        variance = sum((d - mean) ** 2 for d in diffs) / (n - 1)
        if mean > edge + math.sqrt(variance / n) and mean > best_mean:
            best, best_mean = option, mean
    return best


def _search(
    k: SeatKnowledge,
    rng: random.Random,
    budget: ExpertBudget,
    width: int,
    evaluate: Callable[[World], list[float]],
) -> list[list[float]]:
    """`evaluate` of each deal sampled within the budget (one row per deal)."""
    # The clock is read after each deal: one that ran past the hard stop is dropped.
    read = budget_clock(budget)
    started = read()
    soft = started + budget.seconds
    hard = started + budget.seconds * budget.hard_factor
    rows: list[list[float]] = []
    worlds = 0
    playouts = 0
    while playouts + width <= budget.playouts:
        now = read()
        if now > hard or (now > soft and worlds >= budget.min_worlds):
            break
        world = sample_world(k, rng)
        worlds += 1
        if world is None:
            continue
        scores = evaluate(world)
        playouts += width
        if read() > hard and rows:
            break  # this deal ran past the hard stop: drop it
        rows.append(scores)
    return rows


def expert_bid(k: SeatKnowledge, rng: random.Random, budget: ExpertBudget) -> Bid:
    """STANDARD's bid, one more and one less (or, when STANDARD bids NIL, NIL against a
    number): each played out over sampled deals (the later bidders bidding STANDARD),
    the best mean kept; STANDARD's bid wins unless another beats it clearly. A NIL the
    search found by itself failed too often in tournaments (noisy +-100 outcomes win a
    max over a few deals by luck), so EXPERT only bids NIL where STANDARD would."""
    base = standard_bid(k)
    options: list[Bid] = [base]
    if base.tricks is not None:
        partner_bid = k.bids[k.seat.partner]
        low = 1 if partner_bid is not None and partner_bid.tricks is not None else 0
        for tricks in (base.tricks - 1, base.tricks + 1):
            if low <= tricks <= 13:
                options.append(Bid(BidKind.TRICKS, tricks))
    else:
        # STANDARD would bid NIL: search whether its number for the hand does better.
        options.append(Bid(BidKind.TRICKS, max(1, round(hand_strength(k.hand)))))

    def evaluate(world: World) -> list[float]:
        return [float(_bid_playout(k, world, bid)) for bid in options]

    rows = _search(k, rng, budget, len(options), evaluate)
    edge = NIL_EDGE if base.tricks is None else BASE_EDGE
    return options[paired_best(rows, 0, edge)]


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
