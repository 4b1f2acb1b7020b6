"""Card reading for the knowledge-based bots: hand strength, trick state, card memory.

Everything here is a pure function of a `SeatKnowledge` (or of a seat's own cards).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.rules.bidding import Bid, team_target
from app.rules.bots.knowledge import SeatKnowledge
from app.rules.cards import FULL_DECK, Card, Rank, Suit
from app.rules.seats import Seat, Team

SPADES = Suit.SPADES
SIDE_SUITS = (Suit.HEARTS, Suit.CLUBS, Suit.DIAMONDS)
ACE, KING, QUEEN, JACK = Rank.ACE, Rank.KING, Rank.QUEEN, Rank.JACK
_SUIT_CARDS = {s: tuple(c for c in FULL_DECK if c.suit == s) for s in Suit}  # ACE first


# ----------------------------------------------------------------------------- bidding


def by_suit(cards: Iterable[Card]) -> dict[Suit, list[Card]]:
    """The cards grouped by suit, each group highest first."""
    groups: dict[Suit, list[Card]] = {s: [] for s in Suit}
    for card in cards:
        groups[card.suit].append(card)
    for group in groups.values():
        group.sort(key=lambda c: -c.rank)
    return groups


def hand_strength(cards: Iterable[Card]) -> float:
    """Expected tricks of a 13-card hand: sure and likely tricks suit by suit.

    Spades: the ace, a king with one guard, a queen with two, half a jack with three,
    and every spade past the third. Side suits: an ace (less in a long suit), a guarded
    king, a queen with two guards; short side suits are worth ruffs while spades last.
    """
    groups = by_suit(cards)
    spades = groups[SPADES]
    count = len(spades)
    ranks = {c.rank for c in spades}
    tricks = 0.0
    tricks += 1.0 if ACE in ranks else 0.0
    tricks += (1.0 if count >= 2 else 0.3) if KING in ranks else 0.0
    tricks += (0.9 if count >= 3 else 0.2) if QUEEN in ranks else 0.0
    tricks += 0.5 if JACK in ranks and count >= 4 else 0.0
    tricks += max(0, count - 3)
    spare_trumps = min(count, 3) - (1 if ACE in ranks else 0)  # low trumps free to ruff
    ruffs = 0.0
    for suit in SIDE_SUITS:
        group = groups[suit]
        length = len(group)
        suit_ranks = {c.rank for c in group}
        if ACE in suit_ranks:
            tricks += 1.0 if length <= 5 else 0.6
        if KING in suit_ranks:
            if length >= 2:
                tricks += (0.85 if ACE in suit_ranks else 0.7) if length <= 5 else 0.3
            else:
                tricks += 0.15
        if QUEEN in suit_ranks and 3 <= length <= 4:
            tricks += 0.45 if (ACE in suit_ranks or KING in suit_ranks) else 0.3
        if length == 0:
            ruffs += 1.0
        elif length == 1:
            ruffs += 0.6
        elif length == 2:
            ruffs += 0.2
    tricks += min(ruffs, max(0.0, spare_trumps * 0.85))
    return tricks


def nil_risk(cards: Iterable[Card]) -> float:
    """How likely a hand is to take a trick when trying not to (0 = safe), roughly.

    High spades are near-certain tricks; a high side card is a risk unless enough low
    cards of its suit guard it (they let it be thrown under others).
    """
    groups = by_suit(cards)
    spades = groups[SPADES]
    risk = 0.0
    if len(spades) > 3:
        risk += 1.0 * (len(spades) - 3)
    for card in spades:
        if card.rank >= QUEEN:
            risk += 1.0
        elif card.rank >= Rank.TEN:
            risk += 0.45
        elif card.rank >= Rank.EIGHT:
            risk += 0.15
    for suit in SIDE_SUITS:
        group = groups[suit]
        lows = sum(1 for c in group if c.rank <= Rank.SIX)
        for index, card in enumerate(group):
            covered_by = len(group) - index - 1  # lower cards of the suit held
            if card.rank == ACE:
                risk += 0.9 if covered_by < 4 else 0.8
            elif card.rank == KING:
                risk += 0.6 if covered_by < 3 else 0.2
            elif card.rank == QUEEN:
                risk += 0.35 if covered_by < 2 else 0.1
            elif card.rank == JACK:
                risk += 0.15 if covered_by < 2 else 0.0
        if group and lows == 0:
            risk += 0.25
    return risk


# ----------------------------------------------------------------------------- the hand


@dataclass(frozen=True, slots=True)
class TeamStatus:
    """A team's position in the hand."""

    target: int  # 0 for no target (double nil) or a zero bid
    tricks: int
    need: int  # tricks still needed to make the target (<= 0 once made)


def team_status(k: SeatKnowledge, team: Team) -> TeamStatus:
    """The team's target, tricks and tricks still needed (nil bidders' tricks count)."""
    order = [s for s in k.bid_order if s.team is team]
    target = None
    if len(order) == 2:
        target = team_target(k.bids[order[0]], k.bids[order[1]])
    seats = team.seats
    tricks = k.tricks_won[seats[0]] + k.tricks_won[seats[1]]
    goal = target or 0
    return TeamStatus(goal, tricks, goal - tricks)


def is_nil(bid: Bid | None) -> bool:
    """NIL or BLIND_NIL."""
    return bid is not None and bid.tricks is None


def live_nil(k: SeatKnowledge, seat: Seat) -> bool:
    """`seat` bid nil and has not taken a trick yet."""
    return is_nil(k.bids[seat]) and k.tricks_won[seat] == 0


# ----------------------------------------------------------------------------- memory


def outside(k: SeatKnowledge, suit: Suit) -> list[Card]:
    """Cards of `suit` another seat may still hold (not played, not in this hand)."""
    mine = k.hand
    played = k.played
    return [c for c in _SUIT_CARDS[suit] if c not in played and c not in mine]


def higher_outside(k: SeatKnowledge, card: Card) -> int:
    """How many cards above `card` in its suit another seat may still hold."""
    mine = k.hand
    played = k.played
    count = 0
    for c in _SUIT_CARDS[card.suit]:
        if c.rank <= card.rank:
            break
        if c not in played and c not in mine:
            count += 1
    return count


def is_boss(k: SeatKnowledge, card: Card) -> bool:
    """No other seat can hold a higher card of the suit."""
    return higher_outside(k, card) == 0


def cheapest_equal(k: SeatKnowledge, card: Card, options: Sequence[Card]) -> Card:
    """The lowest card among `options` of `card`'s suit worth as much as `card`: no card
    another seat may hold lies between them (e.g. Q from K Q)."""
    best = card
    mine = set(options)
    for c in _SUIT_CARDS[card.suit]:
        if c.rank >= card.rank:
            continue
        if c in mine:
            best = c
        elif c not in k.played and c not in k.hand:
            break  # an outside card in between: lower cards are not equal
    return best


def beats(card: Card, best: Card) -> bool:
    """Whether `card` would beat the trick's current best card `best`."""
    if card.suit == best.suit:
        return card.rank > best.rank
    return card.suit is SPADES


def current_best(plays: Sequence[tuple[Seat, Card]]) -> tuple[Seat, Card]:
    """The seat winning the trick in progress so far, and its card."""
    best_seat, best = plays[0]
    for seat, card in plays[1:]:
        if beats(card, best):
            best_seat, best = seat, card
    return best_seat, best


def still_to_play(k: SeatKnowledge) -> list[Seat]:
    """The seats that play to the current trick after this one."""
    after = []
    seat = k.seat.left
    for _ in range(3 - len(k.current)):
        after.append(seat)
        seat = seat.left
    return after


def can_beat(k: SeatKnowledge, seat: Seat, best: Card) -> bool:
    """Whether `seat` (another seat) might still beat `best` in this trick, from memory:
    the voids it showed, the cards out, and the cards known to be in the partner's hand."""
    voids = k.voids[seat]
    led = k.current[0][1].suit if k.current else best.suit
    known = k.partner_known if k.passed else frozenset()
    partner = seat is k.seat.partner

    def higher(suit: Suit, rank: int) -> bool:
        for c in _SUIT_CARDS[suit]:
            if c.rank <= rank:
                return False
            if c not in k.played and c not in k.hand and (partner or c not in known):
                return True
        return False

    if led not in voids:
        # It may have to follow: it can beat only a best card of the led suit.
        return best.suit == led and higher(led, best.rank)
    if SPADES in voids:
        return False
    return higher(SPADES, best.rank if best.suit is SPADES else 1)


def sure_winner(k: SeatKnowledge, best: Card, exclude: Seat | None = None) -> bool:
    """No seat still to play (other than `exclude`) can beat `best`."""
    return not any(can_beat(k, s, best) for s in still_to_play(k) if s is not exclude)


def lowest(cards: Sequence[Card]) -> Card:
    """The lowest-ranked card, a non-spade when there is a choice."""
    return min(cards, key=lambda c: (c.suit is SPADES, c.rank))


def highest(cards: Sequence[Card]) -> Card:
    """The highest-ranked card, a spade last when only ranks are compared."""
    return max(cards, key=lambda c: (c.rank, c.suit is not SPADES))
