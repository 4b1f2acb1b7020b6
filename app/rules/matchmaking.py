"""Quick play's matching (docs/rules.md, Quick play): searching tickets in, tables out.

A pure function of the tickets, their players' ratings, the blocks between them and the
time: the matchmaker calls it once per wave and stores what it answers.

- Four tickets with the same `rated` make a table. Each ticket has a window around its
  player's rating that starts at +/-100 and widens by 100 every 10 s of waiting; four
  tickets fit together when every two of them are within *both* their windows, belong
  to different players, and neither player has blocked the other.
- Tickets are served oldest first: the oldest ticket of a pool is matched whenever any
  three others fit with it, and each ticket takes the nearest ratings that fit
  (nearest first).
- An unrated ticket that has waited `bot_seconds` without a table is matched with up to
  two other unrated tickets (the oldest that fit), and bots take the other seats.
- Partners are chosen among the three pairings of the four so that the two teams' rating
  totals differ least (a bot counts as `bot_rating`); the oldest ticket sits NORTH with
  its partner SOUTH, the older of the other two EAST.

Cost: one sort by rating and one by age per pool, then for each ticket a walk outward
from its rating that skips tickets already taken (`_Gaps`, amortised near O(1) per
step) and stops at the nearest `NEAREST` that fit it; a table is found among those
(at most C(16, 3) = 560 triples, almost always the first). So a wave is
O(n log n) for n searching tickets; only the oldest ticket of a pool searches its
whole window when the nearest do not fit together (many blocks).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum

from app.rules.seats import SEATS

NEAREST = 16  # candidates looked at first, nearest in rating
SEARCH_BUDGET = 4096  # triples looked at for a ticket that is not the oldest of its pool


class TicketStatus(StrEnum):
    """A ticket's life: SEARCHING, then one final state."""

    SEARCHING = "SEARCHING"
    MATCHED = "MATCHED"
    CANCELLED = "CANCELLED"
    EXPIRED = "EXPIRED"

    @property
    def final(self) -> bool:
        """Ended: nothing changes it any more."""
        return self is not TicketStatus.SEARCHING


@dataclass(frozen=True, slots=True)
class Ticket:
    """A searching ticket, as the matcher sees it."""

    id: str
    player_id: str
    rated: bool
    started_at: float  # epoch seconds
    rating: int  # the player's shown rating


@dataclass(frozen=True, slots=True)
class MatchPolicy:
    """The numbers of the rules (docs/rules.md), `bot_seconds` a setting."""

    window: float = 100.0  # half-width of a new ticket's window
    widening: float = 100.0  # added to the half-width ...
    widen_seconds: float = 10.0  # ... every this many seconds of waiting (continuously)
    bot_seconds: float = 15.0  # an unrated ticket waits this long before bots fill in
    bot_rating: int = 1500  # what a bot counts for when partners are chosen

    def half_width(self, ticket: Ticket, now: float) -> float:
        """How far from its player's rating `ticket` accepts another player at `now`."""
        waited = max(0.0, now - ticket.started_at)
        return self.window + self.widening * waited / self.widen_seconds

    def due_for_bots(self, ticket: Ticket, now: float) -> bool:
        """An unrated ticket that has waited long enough for bots."""
        return not ticket.rated and now - ticket.started_at >= self.bot_seconds


@dataclass(frozen=True, slots=True)
class Match:
    """One table: who sits NORTH, EAST, SOUTH, WEST (None: a bot)."""

    seats: tuple[Ticket | None, Ticket | None, Ticket | None, Ticket | None]

    @property
    def tickets(self) -> list[Ticket]:
        """The humans' tickets, NORTH first."""
        return [t for t in self.seats if t is not None]

    @property
    def rated(self) -> bool:
        """Whether the table is rated (its tickets are)."""
        return self.tickets[0].rated


class Blocks:
    """Who may not sit with whom: a block in either direction keeps two players apart."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._apart: dict[str, set[str]] = {}
        for blocker, blocked in pairs:
            self._apart.setdefault(blocker, set()).add(blocked)
            self._apart.setdefault(blocked, set()).add(blocker)

    def apart(self, a: str, b: str) -> bool:
        """Whether one of the two players blocked the other."""
        return b in self._apart.get(a, ())


def match_tickets(
    tickets: Sequence[Ticket],
    blocks: Collection[tuple[str, str]],
    now: float,
    policy: MatchPolicy | None = None,
) -> list[Match]:
    """The tables to open now: rated and unrated tickets in separate pools, each served
    oldest first. Tickets left out keep searching."""
    rules = policy or MatchPolicy()
    apart = Blocks(blocks)
    seated: set[str] = set()  # players given a table in this wave (one ticket each)
    matches: list[Match] = []
    for rated in (True, False):
        pool = [t for t in tickets if t.rated is rated]
        matches += _Pool(pool, apart, now, rules, seated).matches()
    return matches


def fits(a: Ticket, b: Ticket, blocks: Blocks, now: float, policy: MatchPolicy) -> bool:
    """Whether two tickets may share a table: different players, neither blocked by the
    other, each inside the other's window."""
    if a.player_id == b.player_id or blocks.apart(a.player_id, b.player_id):
        return False
    gap = abs(a.rating - b.rating)
    return gap <= policy.half_width(a, now) and gap <= policy.half_width(b, now)


def seat_four(members: Sequence[Ticket | None], policy: MatchPolicy) -> Match:
    """Seat four (humans oldest first, then bots): the pairing whose team totals differ
    least (the first such of the oldest's partners, in that order); the oldest NORTH,
    its partner SOUTH, the older of the other two EAST."""
    assert len(members) == 4

    def rating(member: Ticket | None) -> int:
        return member.rating if member is not None else policy.bot_rating

    first, rest = members[0], list(members[1:])
    total = sum(rating(m) for m in members)
    best = min(range(3), key=lambda i: abs(2 * (rating(first) + rating(rest[i])) - total))
    partner = rest[best]
    east, west = [m for i, m in enumerate(rest) if i != best]
    return Match((first, east, partner, west))


def team_gap(match: Match, policy: MatchPolicy) -> int:
    """How far apart the two teams' rating totals are (a bot counts as `bot_rating`)."""
    ratings = [t.rating if t is not None else policy.bot_rating for t in match.seats]
    return abs(sum(ratings[s] for s in SEATS[0::2]) - sum(ratings[s] for s in SEATS[1::2]))


class _NextFree:
    """Indices 0..n-1, some taken: the first free one at or after an index, with path
    compression (a union-find over the runs of taken indices)."""

    def __init__(self, size: int) -> None:
        self._next = list(range(size + 1))  # index `size`: "none left"

    def take(self, index: int) -> None:
        """Mark `index` taken."""
        self._next[index] = index + 1

    def find(self, index: int) -> int:
        """The first free index >= `index` (n when none)."""
        root = index
        while self._next[root] != root:
            root = self._next[root]
        while self._next[index] != root:
            self._next[index], index = root, self._next[index]
        return root


class _Gaps:
    """The free indices of a sorted list, found from any index in either direction."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._forward = _NextFree(size)
        self._backward = _NextFree(size)  # on mirrored indices

    def take(self, index: int) -> None:
        """Mark `index` taken."""
        self._forward.take(index)
        self._backward.take(self._size - 1 - index)

    def right(self, index: int) -> int:
        """The first free index >= `index` (n when none)."""
        return self._forward.find(min(index, self._size))

    def left(self, index: int) -> int:
        """The last free index <= `index` (-1 when none)."""
        return self._size - 1 - self._backward.find(min(self._size - 1 - index, self._size))


class _Pool:
    """One wave over the tickets of one pool (all rated, or all unrated)."""

    def __init__(
        self,
        tickets: list[Ticket],
        blocks: Blocks,
        now: float,
        policy: MatchPolicy,
        seated: set[str],
    ) -> None:
        self.seated = seated
        self.blocks = blocks
        self.now = now
        self.policy = policy
        self.by_age = sorted(tickets, key=lambda t: (t.started_at, t.id))
        self.by_rating = sorted(tickets, key=lambda t: (t.rating, t.started_at, t.id))
        self.ratings = [t.rating for t in self.by_rating]
        self.rating_slot = {t.id: i for i, t in enumerate(self.by_rating)}
        self.age_slot = {t.id: i for i, t in enumerate(self.by_age)}
        self.free_by_rating = _Gaps(len(tickets))
        self.free_by_age = _Gaps(len(tickets))

    def matches(self) -> list[Match]:
        """Serve every ticket, oldest first."""
        out: list[Match] = []
        for position, ticket in enumerate(self.by_age):
            if self.free_by_age.right(position) != position:
                continue  # taken by an older ticket's table
            if ticket.player_id in self.seated:
                continue  # its player's other ticket got a table
            others = self._nearest_three(ticket, oldest=position == 0)
            if others is not None:
                out.append(self._open([ticket, *others]))
            elif self.policy.due_for_bots(ticket, self.now):
                out.append(self._open([ticket, *self._oldest_fitting(ticket, 2)]))
        return out

    def _open(self, humans: list[Ticket]) -> Match:
        for ticket in humans:
            self.seated.add(ticket.player_id)
            self.free_by_rating.take(self.rating_slot[ticket.id])
            self.free_by_age.take(self.age_slot[ticket.id])
        humans.sort(key=lambda t: (t.started_at, t.id))
        members: list[Ticket | None] = [*humans, *([None] * (4 - len(humans)))]
        return seat_four(members, self.policy)

    def _fits(self, a: Ticket, b: Ticket) -> bool:
        if a.player_id in self.seated or b.player_id in self.seated:
            return False
        return fits(a, b, self.blocks, self.now, self.policy)

    def _nearest_three(self, ticket: Ticket, oldest: bool) -> list[Ticket] | None:
        """Three free tickets that fit with `ticket` and each other, nearest in rating
        first; the whole window is searched for the oldest ticket of the pool, the
        nearest `NEAREST` (and a bounded search beyond) for the others."""
        budget = None if oldest else SEARCH_BUDGET
        candidates: list[Ticket] = []
        walk = self._outward(ticket)
        want = NEAREST
        while True:
            for other in walk:
                candidates.append(other)
                if len(candidates) >= want:
                    break
            found, budget = _first_triple(candidates, self._fits, budget)
            if found is not None or len(candidates) < want or budget == 0:
                return found
            want *= 2

    def _outward(self, ticket: Ticket) -> Iterator[Ticket]:
        """The free tickets that fit `ticket`, nearest rating first (ties: the lower)."""
        reach = self.policy.half_width(ticket, self.now)
        home = self.rating_slot[ticket.id]
        low = bisect.bisect_left(self.ratings, ticket.rating - reach)
        high = bisect.bisect_right(self.ratings, ticket.rating + reach) - 1
        gaps = self.free_by_rating
        down, up = gaps.left(home - 1), gaps.right(home + 1)
        while True:
            has_down, has_up = down >= low, up <= high
            if not has_down and not has_up:
                return
            below = ticket.rating - self.ratings[down] if has_down else None
            above = self.ratings[up] - ticket.rating if has_up else None
            if above is None or (below is not None and below <= above):
                other, down = self.by_rating[down], gaps.left(down - 1)
            else:
                other, up = self.by_rating[up], gaps.right(up + 1)
            if self._fits(ticket, other):
                yield other

    def _oldest_fitting(self, ticket: Ticket, count: int) -> list[Ticket]:
        """Up to `count` free tickets, oldest first, that fit `ticket` and each other."""
        chosen: list[Ticket] = []
        position = self.free_by_age.right(0)
        while position < len(self.by_age) and len(chosen) < count:
            other = self.by_age[position]
            if other.id != ticket.id and all(self._fits(other, t) for t in (ticket, *chosen)):
                chosen.append(other)
            position = self.free_by_age.right(position + 1)
        return chosen


def _first_triple(
    candidates: Sequence[Ticket], fit: Callable[[Ticket, Ticket], bool], budget: int | None
) -> tuple[list[Ticket] | None, int | None]:
    """The first three of `candidates` (in their order) that fit each other, and the
    budget left (None: unbounded)."""
    size = len(candidates)
    for i in range(size):
        a = candidates[i]
        for j in range(i + 1, size):
            b = candidates[j]
            if not fit(a, b):
                continue
            for k in range(j + 1, size):
                if budget is not None:
                    if budget == 0:
                        return None, 0
                    budget -= 1
                c = candidates[k]
                if fit(a, c) and fit(b, c):
                    return [a, b, c], budget
    return None, budget
