"""Quick play's matcher (app/rules/matchmaking.py): the rules of docs/rules.md, Quick play,
as properties of random waves (hypothesis) and a few worked examples."""

from __future__ import annotations

import itertools
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from app.rules.matchmaking import (
    Blocks,
    Match,
    MatchPolicy,
    Ticket,
    fits,
    match_tickets,
    seat_four,
    team_gap,
)

NOW = 100.0
POLICY = MatchPolicy()
MANY = settings(max_examples=300, deadline=None)


@st.composite
def waves(draw: st.DrawFn, shared: bool = False) -> tuple[list[Ticket], list[tuple[str, str]]]:
    """Up to 14 tickets, ratings close enough for tables to form, some blocks. Each
    ticket has a player of its own (the store keeps one searching ticket per player);
    `shared`: up to 10 players hold them (the matcher must still seat nobody twice)."""
    count = draw(st.integers(0, 14))
    players = [f"p{i}" for i in range(draw(st.integers(1, 10)) if shared else count or 1)]
    ratings = {p: draw(st.integers(1100, 1900)) for p in players}
    tickets = [
        Ticket(
            id=f"t{i}",
            player_id=(player := draw(st.sampled_from(players)) if shared else players[i]),
            rated=draw(st.booleans()),
            started_at=NOW - draw(st.floats(0, 60, allow_nan=False)),
            rating=ratings[player],
        )
        for i in range(count)
    ]
    pairs = draw(st.lists(st.tuples(st.sampled_from(players), st.sampled_from(players))))
    return tickets, [(a, b) for a, b in pairs if a != b]


def pairings(match: Match) -> list[int]:
    """The team gaps of the three ways to pair the match's four."""
    gaps = []
    members = list(match.seats)
    first, rest = members[0], members[1:]
    for partner in range(3):
        others = [m for i, m in enumerate(rest) if i != partner]
        gaps.append(team_gap(Match((first, others[0], rest[partner], others[1])), POLICY))
    return gaps


def can_make_table(ticket: Ticket, others: list[Ticket], blocks: Blocks) -> bool:
    """Whether some three of `others` fit with `ticket` and each other (brute force)."""
    for trio in itertools.combinations(others, 3):
        four = (ticket, *trio)
        if all(fits(a, b, blocks, NOW, POLICY) for a, b in itertools.combinations(four, 2)):
            return True
    return False


@MANY
@given(waves(shared=True))
def test_no_ticket_and_no_player_is_seated_twice(wave: tuple[list[Ticket], list]) -> None:
    tickets, blocks = wave
    matches = match_tickets(tickets, blocks, NOW, POLICY)
    seated = [t for m in matches for t in m.tickets]
    assert max(Counter(t.id for t in seated).values(), default=0) <= 1
    assert max(Counter(t.player_id for t in seated).values(), default=0) <= 1


@MANY
@given(waves())
def test_a_table_is_all_rated_or_all_unrated_and_rated_tables_have_four_humans(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    for match in match_tickets(tickets, blocks, NOW, POLICY):
        assert len({t.rated for t in match.tickets}) == 1
        if match.rated:
            assert None not in match.seats


@MANY
@given(waves())
def test_two_players_of_whom_one_blocked_the_other_never_sit_together(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    blocked = {frozenset(pair) for pair in blocks}
    for match in match_tickets(tickets, blocks, NOW, POLICY):
        for a, b in itertools.combinations(match.tickets, 2):
            assert frozenset((a.player_id, b.player_id)) not in blocked


@MANY
@given(waves())
def test_every_human_is_inside_the_window_of_every_other_ticket_of_the_table(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    for match in match_tickets(tickets, blocks, NOW, POLICY):
        for mine, other in itertools.permutations(match.tickets, 2):
            waited = NOW - mine.started_at
            # +/-100 at the start, at least 100 more for every 10 s waited.
            assert abs(other.rating - mine.rating) <= POLICY.half_width(mine, NOW)
            assert POLICY.half_width(mine, NOW) >= 100 + 100 * (waited // 10)


@MANY
@given(waves())
def test_partners_make_the_team_totals_differ_least_of_the_three_pairings(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    for match in match_tickets(tickets, blocks, NOW, POLICY):
        assert team_gap(match, POLICY) == min(pairings(match))


@MANY
@given(waves())
def test_the_oldest_ticket_of_a_pool_is_matched_whenever_three_others_fit_with_it(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    matched = {t.id for m in match_tickets(tickets, blocks, NOW, POLICY) for t in m.tickets}
    apart = Blocks(blocks)
    for rated in (True, False):
        pool = sorted((t for t in tickets if t.rated is rated), key=lambda t: (t.started_at, t.id))
        if not pool:
            continue
        oldest, others = pool[0], pool[1:]
        if oldest.id not in matched:
            assert not can_make_table(oldest, others, apart)
            assert not POLICY.due_for_bots(oldest, NOW)


@MANY
@given(waves())
def test_no_four_tickets_left_searching_could_have_made_a_table(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    matched = {t.id for m in match_tickets(tickets, blocks, NOW, POLICY) for t in m.tickets}
    left = [t for t in tickets if t.id not in matched]
    apart = Blocks(blocks)
    for four in itertools.combinations(left, 4):
        if len({t.rated for t in four}) == 1:
            pairs = itertools.combinations(four, 2)
            assert not all(fits(a, b, apart, NOW, POLICY) for a, b in pairs)


@MANY
@given(waves())
def test_unrated_tickets_waiting_for_the_bot_time_get_a_table_and_rated_ones_never_bots(
    wave: tuple[list[Ticket], list],
) -> None:
    tickets, blocks = wave
    matches = match_tickets(tickets, blocks, NOW, POLICY)
    matched = {t.id for m in matches for t in m.tickets}
    seated_players = {t.player_id for m in matches for t in m.tickets}
    for ticket in tickets:
        if POLICY.due_for_bots(ticket, NOW) and ticket.player_id not in seated_players:
            raise AssertionError(f"{ticket} waited for bots and got no table")
    for match in matches:
        if None in match.seats:
            assert not match.rated
            assert 1 <= len(match.tickets) <= 3
            assert any(POLICY.due_for_bots(t, NOW) for t in match.tickets)
    assert matched <= {t.id for t in tickets}


@MANY
@given(waves())
def test_the_oldest_human_of_a_table_sits_north(wave: tuple[list[Ticket], list]) -> None:
    tickets, blocks = wave
    for match in match_tickets(tickets, blocks, NOW, POLICY):
        north = match.seats[0]
        assert north is not None
        assert north.started_at == min(t.started_at for t in match.tickets)


def ticket(name: str, rating: int, waited: float = 0.0, rated: bool = False) -> Ticket:
    """A ticket of player `name` that has waited `waited` seconds at NOW."""
    return Ticket(f"t-{name}", name, rated, NOW - waited, rating)


def test_four_new_tickets_within_100_of_each_other_make_a_table() -> None:
    four = [ticket(n, r) for n, r in zip("abcd", (1500, 1540, 1580, 1600), strict=True)]
    (match,) = match_tickets(four, [], NOW)
    assert {t.player_id for t in match.tickets} == set("abcd")


def test_a_rating_outside_a_new_tickets_window_waits_until_the_windows_widen() -> None:
    four = [ticket(n, r) for n, r in zip("abcd", (1500, 1520, 1540, 1750), strict=True)]
    assert match_tickets(four, [], NOW) == []
    # 10 s later every window is +/-200, 20 s later +/-300: 250 fits.
    later = [ticket(t.player_id, t.rating, waited=20) for t in four]
    assert len(match_tickets(later, [], NOW)) == 1


def test_the_nearest_ratings_are_preferred() -> None:
    oldest = ticket("a", 1500, waited=30)
    near = [ticket(n, r, waited=1) for n, r in zip("bcd", (1490, 1510, 1520), strict=True)]
    far = [ticket(n, r, waited=5) for n, r in zip("efg", (1420, 1585, 1590), strict=True)]
    matches = match_tickets([oldest, *far, *near], [], NOW)
    assert {t.player_id for t in matches[0].tickets} == set("abcd")


def test_a_block_in_either_direction_keeps_two_players_apart() -> None:
    four = [ticket(n, 1500, waited=i) for i, n in enumerate("abcd")]
    assert match_tickets(four, [("a", "d")], NOW) == []
    assert match_tickets(four, [("d", "a")], NOW) == []
    fifth = ticket("e", 1500)
    (match,) = match_tickets([*four, fifth], [("d", "a")], NOW)
    # d, the oldest, plays; a (blocked by d) is left out.
    assert {t.player_id for t in match.tickets} == set("bcde")


def test_partners_balance_the_team_totals() -> None:
    four = [
        ticket("a", 1700, waited=4),
        ticket("b", 1690, waited=3),
        ticket("c", 1610, waited=2),
        ticket("d", 1600, waited=1),
    ]
    (match,) = match_tickets(four, [], NOW)
    names = [t.player_id if t is not None else None for t in match.seats]
    # 1700 + 1600 against 1690 + 1610: a NORTH with d SOUTH, b EAST, c WEST.
    assert names == ["a", "b", "d", "c"]


def test_an_unrated_ticket_gets_bots_after_the_bot_time_with_the_oldest_others_that_fit() -> None:
    alone = ticket("a", 1500, waited=15)
    assert match_tickets([ticket("a", 1500, waited=14.9)], [], NOW) == []
    (match,) = match_tickets([alone], [], NOW)
    assert match.seats == (alone, None, None, None)
    others = [
        ticket("b", 1510, waited=9),
        ticket("c", 1490, waited=8),
        ticket("d", 1500, waited=7),
        ticket("e", 1900, waited=10),  # outside the windows
    ]
    blocked = [("b", "a")]
    (match,) = match_tickets([alone, *others], blocked, NOW)
    # b blocked a; c and d are the oldest of the others that fit.
    assert {t.player_id for t in match.tickets} == {"a", "c", "d"}
    assert len([s for s in match.seats if s is None]) == 1


def test_rated_tickets_never_get_bots() -> None:
    assert match_tickets([ticket("a", 1500, waited=600, rated=True)], [], NOW) == []


def test_rated_and_unrated_tickets_are_never_mixed() -> None:
    mixed = [ticket(n, 1500, rated=n in "ab") for n in "abcd"]
    assert match_tickets(mixed, [], NOW) == []


def test_two_humans_with_bots_are_balanced_with_bots_counted_at_1500() -> None:
    humans = [ticket("a", 1800, waited=20), ticket("b", 1200, waited=16)]
    match = seat_four([*humans, None, None], POLICY)
    # Partnering 1800 with 1200 (3000 against 3000) beats setting them apart.
    assert match.seats[0] is humans[0] and match.seats[2] is humans[1]


def test_a_large_wave_serves_everyone_who_fits() -> None:
    tickets = [ticket(f"p{i}", 1500 + (i % 40), waited=i % 7) for i in range(400)]
    matches = match_tickets(tickets, [], NOW)
    assert len(matches) == 100
