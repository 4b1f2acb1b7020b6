"""The STANDARD bot: knowledge-based bidding and play with card memory.

Every decision is a pure function of the seat's `SeatKnowledge`; no search,
well under a millisecond. The same play is the playout policy of EXPERT.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.rules.bidding import MAX_TRICKS, Bid, BidKind
from app.rules.bots.basic import pass_for
from app.rules.bots.knowledge import SeatKnowledge
from app.rules.bots.reading import (
    SPADES,
    beats,
    by_suit,
    cheapest_equal,
    current_best,
    hand_strength,
    higher_outside,
    highest,
    is_boss,
    is_nil,
    live_nil,
    lowest,
    nil_risk,
    outside,
    still_to_play,
    sure_winner,
    team_status,
)
from app.rules.cards import Card
from app.rules.game import Phase
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, RevealHand
from app.rules.scoring import BAG_LIMIT
from app.rules.seats import Seat

NIL_RISK_LIMIT = 0.9  # nil_risk below this: the hand can stay under


# ----------------------------------------------------------------------------- bidding


def standard_bid(k: SeatKnowledge) -> Bid:
    """A bid from hand strength; NIL with a hand that can stay under; as the team's
    second bidder, a sensible team total (partner's number plus own tricks, max 13)."""
    strength = hand_strength(k.hand)
    partner_bid = k.bids[k.seat.partner]
    if partner_bid is None and wants_nil(k, strength):
        return Bid(BidKind.NIL)
    if partner_bid is not None and partner_bid.tricks is not None:
        # Partner bid a number: nil beside a strong partner, else the team total.
        if partner_bid.tricks >= 3 and wants_nil(k, strength):
            return Bid(BidKind.NIL)
        total = partner_bid.tricks + round(strength)
        total = _temper(k, total, partner_bid.tricks)
        return Bid(BidKind.TRICKS, max(1, min(MAX_TRICKS, total)))
    own = round(strength)
    if partner_bid is not None:  # partner bid nil: my number is the target; I cover
        own = max(1, round(strength - 0.3))
    return Bid(BidKind.TRICKS, min(MAX_TRICKS, own))


def _temper(k: SeatKnowledge, total: int, partner: int) -> int:
    """Keep the team total believable: all four bids rarely add up past 14, and a team
    about to take its tenth bag bids up rather than down."""
    others = sum(
        b.tricks or 0 for s, b in enumerate(k.bids) if b is not None and s % 2 != k.seat % 2
    )
    if total + others > 14:
        cap = max(14 - others, total - 2)  # give back at most two tricks
        total = max(partner, min(total, cap))
    if k.bags[k.seat.team] >= BAG_LIMIT - 2:
        total += 1
    return total


def wants_nil(k: SeatKnowledge, strength: float | None = None) -> bool:
    """Whether the hand can stay under: few and low spades, guarded high cards."""
    if strength is None:
        strength = hand_strength(k.hand)
    partner_bid = k.bids[k.seat.partner]
    if is_nil(partner_bid):
        return False
    limit = NIL_RISK_LIMIT
    if partner_bid is not None and partner_bid.tricks is not None and partner_bid.tricks >= 4:
        limit += 0.3  # a strong partner covers more
    return strength <= 2.0 and nil_risk(k.hand) < limit


# ----------------------------------------------------------------------------- moves


def standard_move(k: SeatKnowledge) -> Move:
    """The STANDARD bot's move for the seat on turn."""
    if k.phase is Phase.BIDDING:
        if k.withheld:
            return RevealHand(k.seat)  # BLIND_NIL is EXPERT's call
        return PlaceBid.of(k.seat, standard_bid(k))
    if k.phase is Phase.EXCHANGE:
        return PassCards(k.seat, pass_for(k.hand, k.bids[k.seat]))
    return PlayCard(k.seat, standard_play(k))


def standard_play(k: SeatKnowledge) -> Card:
    """The card to play: the nil bidder ducks, its partner covers, an opponent's nil is
    attacked, otherwise win cheaply what the team needs and duck the rest."""
    legal = k.legal
    if len(legal) == 1:
        return legal[0]
    me, partner = k.seat, k.seat.partner
    if live_nil(k, me):
        return nil_play(k)
    if live_nil(k, partner):
        cover = cover_partner_nil(k)
        if cover is not None:
            return cover
    for opponent in (me.left, partner.left):
        if live_nil(k, opponent):
            attack = attack_nil(k, opponent)
            if attack is not None:
                return attack
    return contract_play(k, wants_tricks(k))


def wants_tricks(k: SeatKnowledge) -> bool:
    """Take tricks while the team still needs some; once its contract is safe, only to
    set the opponents when that is within reach and the bags it costs are affordable."""
    ours = team_status(k, k.seat.team)
    if ours.need > 0:
        return True
    theirs = team_status(k, k.seat.team.other)
    if theirs.need <= 0 or theirs.target == 0:
        return False
    remaining = 13 - k.tricks_done
    to_set = remaining - theirs.need + 1  # tricks we must take to set them
    bags = k.bags[k.seat.team] + (ours.tricks - ours.target) + to_set
    return to_set <= max(1, remaining // 2) and (bags < BAG_LIMIT or theirs.target >= 6)


# ----------------------------------------------------------------------------- nil


def nil_play(k: SeatKnowledge) -> Card:
    """Duck: the highest card that still loses, else the lowest; lead low from the
    suits where most higher cards are still out."""
    legal = k.legal
    if not k.current:
        return max(legal, key=lambda c: (c.suit is not SPADES, higher_outside(k, c), -c.rank))
    _, best = current_best(k.current)
    losing = [c for c in legal if not beats(c, best)]
    if losing:
        side = [c for c in losing if c.suit is not SPADES]
        return highest(side or losing)  # shed danger while it is safe
    if not still_to_play(k):
        return highest(legal)  # the trick is lost anyway: take it with the worst card
    return lowest(legal)  # hope someone after me goes over it


def cover_partner_nil(k: SeatKnowledge) -> Card | None:
    """Protect the partner's nil: win the tricks it might otherwise take."""
    legal = k.legal
    partner = k.seat.partner
    if not k.current:
        # Lead winners, or a suit the partner is void in (it discards safely).
        bosses = [c for c in legal if is_boss(k, c) and c.suit is not SPADES]
        if bosses:
            return highest(bosses)
        voids = [c for c in legal if c.suit in k.voids[partner] and c.suit is not SPADES]
        if voids:
            return highest(voids)
        return highest(legal)
    played = {s for s, _ in k.current}
    winner, best = current_best(k.current)
    if partner in played:
        if winner is not partner:
            return None  # partner is safe in this trick: play for the contract
        beaters = [c for c in legal if beats(c, best)]
        if not beaters:
            return None
        return _cheapest_sure(k, beaters) or highest(beaters)
    # The partner plays after me: win high so it can duck under.
    beaters = [c for c in legal if beats(c, best)]
    if beaters:
        side = [c for c in beaters if c.suit == best.suit] or beaters
        return highest(side) if side[0].suit is not SPADES else lowest(side)
    return None


def attack_nil(k: SeatKnowledge, nil: Seat) -> Card | None:
    """Set an opponent's nil: lead low, stay under its card, never rescue it."""
    legal = k.legal
    if not k.current:
        suits = [c for c in legal if c.suit not in k.voids[nil]]
        return lowest(suits or list(legal))
    played = {s for s, _ in k.current}
    winner, best = current_best(k.current)
    if nil in played:
        if winner is not nil:
            return None
        under = [c for c in legal if not beats(c, best)]
        if under:
            return highest(under)
        return None
    # The nil plays after me: keep the trick low so it may have to win it.
    if winner is k.seat.partner and not beats(lowest(legal), best):
        return lowest(legal)
    under = [c for c in legal if not beats(c, best)]
    return lowest(under) if under else lowest(legal)


# ----------------------------------------------------------------------------- contract


def contract_play(k: SeatKnowledge, want: bool) -> Card:
    """Ordinary play, taking tricks when `want`, ducking them (no bags) otherwise."""
    if not k.current:
        return lead(k, want)
    legal = k.legal
    partner = k.seat.partner
    winner, best = current_best(k.current)
    after = still_to_play(k)
    beaters = [c for c in legal if beats(c, best)]
    if winner is partner and (not after or sure_winner(k, best)):
        # Never beat a partner's sure winner: under it, as low as possible.
        return _shed(k, legal, want)
    if not want:
        under = [c for c in legal if not beats(c, best)]
        if under:
            return highest(under)  # dump high cards while it is safe to
        return highest(legal) if not after else lowest(legal)
    if not beaters:
        return _shed(k, legal, want)
    if not after:
        return _cheapest(beaters)  # last to play: win as cheaply as possible
    sure = _cheapest_sure(k, beaters)
    if sure is not None:
        return sure
    if winner is partner:
        return _shed(k, legal, want)  # partner may hold; do not waste a card on it
    if len(after) == 2 and beaters[0].suit == best.suit:
        return _shed(k, legal, want)  # second hand low: partner plays last to it
    # Third hand high (cheapest of equal cards), or a trump that at least forces.
    following = [c for c in beaters if c.suit == best.suit]
    if following:
        return cheapest_equal(k, highest(following), legal)
    return _cheapest(beaters)


def lead(k: SeatKnowledge, want: bool) -> Card:
    """The card to lead."""
    legal = k.legal
    me, partner = k.seat, k.seat.partner
    opponents = (me.left, partner.left)
    if not want:
        # Lead low from the suit where the most higher cards are out.
        return max(legal, key=lambda c: (c.suit is not SPADES, higher_outside(k, c), -c.rank))

    def ruffed(card: Card) -> bool:
        return any(card.suit in k.voids[o] and SPADES not in k.voids[o] for o in opponents)

    cashing = [c for c in legal if c.suit is not SPADES and is_boss(k, c) and not ruffed(c)]
    if cashing:
        return cashing[0]
    spades = [c for c in legal if c.suit is SPADES]
    if spades and is_boss(k, spades[0]) and len(spades) * 2 >= len(outside(k, SPADES)):
        return spades[0]  # draw trumps with the top spade
    for card in sorted(legal, key=lambda c: c.rank):
        if (
            card.suit is not SPADES
            and card.suit in k.voids[partner]
            and SPADES not in k.voids[partner]
        ) and not ruffed(card):
            return card  # partner ruffs
    side = [c for c in legal if c.suit is not SPADES and not ruffed(c)]
    groups = by_suit(side or legal)
    longest = max(groups.values(), key=lambda g: (len(g), -g[-1].rank if g else 0))
    return longest[-1]


def _cheapest(cards: Sequence[Card]) -> Card:
    """The cheapest winning card: a card of the led suit before a trump, lowest first."""
    return min(cards, key=lambda c: (c.suit is SPADES, c.rank))


def _cheapest_sure(k: SeatKnowledge, beaters: Sequence[Card]) -> Card | None:
    """The cheapest card that wins the trick whatever the seats after me hold."""
    sure = [c for c in beaters if sure_winner(k, c)]
    return _cheapest(sure) if sure else None


def _shed(k: SeatKnowledge, legal: Sequence[Card], want: bool) -> Card:
    """A card that does not matter: the lowest, from a short side suit (to make voids
    for ruffing) while tricks are wanted; never a boss card if avoidable."""
    led = k.current[0][1].suit if k.current else None
    following = [c for c in legal if c.suit == led]
    if following:
        return min(following, key=lambda c: c.rank)
    side = [c for c in legal if c.suit is not SPADES]
    if not side:
        return min(legal, key=lambda c: c.rank)
    if not want:
        return highest(side)
    groups = by_suit(side)
    shortest = min(
        (g for g in groups.values() if g),
        key=lambda g: (is_boss(k, g[0]) and len(g) == 1, len(g), g[-1].rank),
    )
    return shortest[-1]


__all__ = ["standard_bid", "standard_move", "standard_play", "wants_nil"]
