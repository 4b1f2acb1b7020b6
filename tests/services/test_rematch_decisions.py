"""The rematch decision on table snapshots (docs/rules.md, Rematch): who may ask, when, what
the requests change, and the table the last one opens."""

from __future__ import annotations

import pytest

from app.rules.dealing import rematch_seed
from app.rules.errors import ErrorCode, RuleError
from app.rules.seats import SEATS, Seat
from app.rules.simulate import play_game
from app.services.play.rematch import decide_rematch, rematch_of, rematch_table_id
from app.services.tables.snapshot import (
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)
from tests.support.tables import table_snapshot

FINISHED_AT = 1_000_000.0


def finished_table(humans: dict[Seat, str], host: str = "host") -> TableSnapshot:
    """A finished table: the given humans (by seat), bots elsewhere."""
    game, _ = play_game(seed=21)
    occupants = tuple(
        Occupant(humans[s], humans[s].title()) if s in humans else Occupant.bot(s) for s in SEATS
    )
    return table_snapshot(
        id="old1",
        name="friday",
        host_id=host,
        host_name=host.title(),
        visibility=Visibility.FRIENDS_ONLY,
        join_policy=JoinPolicy.INVITE_ONLY,
        spectating=False,
        status=TableStatus.FINISHED,
        version=300,
        occupants=occupants,
        game=game,
        created_at=1.0,
        finished_at=FINISHED_AT,
    )


def refusal(table: TableSnapshot, player: str, now: float = FINISHED_AT + 1) -> ErrorCode:
    with pytest.raises(RuleError) as refused:
        decide_rematch(table, player, now)
    return refused.value.code


def test_a_table_without_humans_refuses_a_rematch_as_the_wrong_phase() -> None:
    assert refusal(finished_table({}), "host") is ErrorCode.WRONG_PHASE


def test_someone_not_seated_is_forbidden_and_late_requests_are_the_wrong_phase() -> None:
    table = finished_table({Seat.NORTH: "host", Seat.SOUTH: "sam"})
    assert refusal(table, "stranger") is ErrorCode.FORBIDDEN
    assert refusal(table, "host", now=FINISHED_AT + 301) is ErrorCode.WRONG_PHASE
    playing = table.evolve(status=TableStatus.PLAYING, finished_at=None)
    assert refusal(playing, "host") is ErrorCode.WRONG_PHASE


def test_each_request_is_one_change_and_asking_twice_changes_nothing() -> None:
    table = finished_table({Seat.NORTH: "host", Seat.SOUTH: "sam"})
    change, opened = decide_rematch(table, "sam", FINISHED_AT + 10)
    assert opened is None
    assert [(m.event, m.seat, m.version) for m in change.steps] == [
        ("REMATCH_REQUESTED", Seat.SOUTH, 301)
    ]
    assert change.log == [(301, 1, {"type": "rematch", "seat": "SOUTH"})]
    asked = change.steps[-1].table
    assert asked.rematch_requests == (Seat.SOUTH,)
    again, opened = decide_rematch(asked, "sam", FINISHED_AT + 20)
    assert again.steps == [] and opened is None


def test_the_last_request_opens_the_same_table_again_with_the_first_human_from_north_as_host() -> (
    None
):
    # The host no longer sits here: EAST is the first seated human clockwise from NORTH.
    table = finished_table({Seat.EAST: "erin", Seat.WEST: "wes"}, host="gone")
    first, _ = decide_rematch(table, "wes", FINISHED_AT + 5)
    change, opened = decide_rematch(first.steps[-1].table, "erin", FINISHED_AT + 6)
    assert [m.event for m in change.steps] == ["REMATCH_REQUESTED", "REMATCH_STARTED"]
    assert opened is not None
    last = change.steps[-1].table
    assert last.next_table_id == opened.id == rematch_table_id("old1")
    assert (opened.host_id, opened.rematch_of) == ("erin", "old1")
    assert opened.occupants == table.occupants
    assert (opened.name, opened.visibility, opened.join_policy, opened.spectating) == (
        "friday",
        Visibility.FRIENDS_ONLY,
        JoinPolicy.INVITE_ONLY,
        False,
    )
    assert opened.status is TableStatus.PLAYING and opened.version == 1
    assert opened.game is not None and opened.game.hand.number == 1
    # Once started, nobody's request changes anything any more.
    assert decide_rematch(last, "erin", FINISHED_AT + 7) == (change.__class__(), None)


def test_a_seeded_tables_rematch_deals_from_a_derived_seed_an_unseeded_ones_from_a_secret() -> None:
    table = finished_table({Seat.NORTH: "host"})
    seeded = rematch_of(table.evolve(deal_seed=21), FINISHED_AT + 1)
    assert seeded.deal_seed == rematch_seed(21)
    assert seeded.game is not None and seeded.game.seed == rematch_seed(21)
    assert seeded.game.seed_public  # a seeded game's record shows its seed, as before
    assert table.game is not None
    assert seeded.game.finished == [] and seeded.game.hand.deal != table.game.finished[0].state.deal
    unseeded = rematch_of(table, FINISHED_AT + 1)
    assert unseeded.deal_seed is None
    assert unseeded.game is not None and not unseeded.game.seed_public
