"""A compiled selection plan builds exactly the data graphql-core executes, for every
viewer of every position of real games, under the web client's document and selections
with aliases, fragments, directives and __typename; what graphql-core would report as
an error is left to graphql-core."""

from __future__ import annotations

import random
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from graphql import ExecutionResult, parse
from graphql.execution.executor import Executor

from app.api.fastpath.plans import Kind, Node, Plan, Subtrees, compile_plan
from app.api.graphql.game_view import game_view, seat_type
from app.api.graphql.resolvers.game import GameUpdate
from app.api.graphql.schema import schema
from app.rules.game import Game, Phase
from app.rules.seats import Seat
from app.rules.simulate import POLICIES, PolicyName
from app.services.tables.events import GameEvent
from app.services.tables.snapshot import TableStatus
from tests.support.tables import PLAYERS, table_snapshot

OPERATIONS = Path(__file__).resolve().parents[2] / "web/src/graphql/operations.graphql"
WEB_SUBSCRIPTION = "GameUpdates"

LOADTEST = (
    "subscription($t: ID!) { gameUpdates(tableId: $t) { event view { version turn phase "
    "handNumber handWithheld legalPlays { suit rank } } } }"
)
TRICKY = """
subscription($t: ID!, $withHand: Boolean!, $noTeams: Boolean!) {
  u: gameUpdates(tableId: $t) {
    __typename
    what: event
    event
    view {
      __typename
      ...Cards
      hand @include(if: $withHand) { rank suit }
      teams @skip(if: $noTeams) { team score }
      ... on GameView { version phase version: version }
      seats { seat bid { kind tricks } isBot botLevel awayPlayer { id username } }
      lastTrick { winner plays { seat card { suit } } }
    }
    view { turnDeadline currentTrick { seat card { rank } } }
  }
}
fragment Cards on GameView { legalPlays { suit rank __typename } hand { suit } }
"""


def web_document() -> str:
    """The web client's GameUpdates subscription with every fragment it uses."""
    return OPERATIONS.read_text(encoding="utf-8")


def positions(seed: int, every: int) -> list[Game]:
    """Copies of one bot game's positions, every `every`-th move."""
    rng = random.Random(seed)
    choose = POLICIES[PolicyName.BASIC]
    game, _ = Game.start(list(PLAYERS), seed=seed)
    found = [game.copy()]
    moves = 0
    while game.phase is not Phase.GAME_OVER and game.hand.number <= 3:
        seat = game.turn
        assert seat is not None
        game.apply(choose(game, seat, rng))
        moves += 1
        if moves % every == 0:
            found.append(game.copy())
    return found


def payloads(seed: int, every: int) -> list[GameUpdate]:
    """Every viewer's payload (four seats and a spectator) of positions of a game."""
    out = []
    for version, game in enumerate(positions(seed, every), start=2):
        table = table_snapshot(game=game, version=version, status=TableStatus.PLAYING)
        for viewer in (*Seat, None):
            view = game_view(table, viewer)
            update = GameUpdate(event=GameEvent.CARD_PLAYED, seat=seat_type(Seat.EAST), view=view)
            out.append(update)
    return out


def executor(document: str, variables: dict[str, Any], name: str | None = None) -> Executor[Any]:
    built = Executor.build(schema._schema, parse(document), None, None, variables, name)
    assert not isinstance(built, list), built
    return built


def planned(
    document: str, variables: dict[str, Any], name: str | None = None
) -> tuple[Executor[Any], Plan]:
    """The operation's executor and its compiled plan (which it must have)."""
    built = executor(document, variables, name)
    plan = compile_plan(built)
    assert plan is not None
    return built, plan


def reference(built: Executor[Any], payload: Any) -> ExecutionResult:
    result = built.build_per_event_executor(payload).execute_operation()
    assert isinstance(result, ExecutionResult)
    return result


CASES = [
    pytest.param(web_document(), {"tableId": "t1"}, WEB_SUBSCRIPTION, id="web client"),
    pytest.param(LOADTEST, {"t": "t1"}, None, id="load test"),
    pytest.param(TRICKY, {"t": "t1", "withHand": True, "noTeams": False}, None, id="tricky"),
    pytest.param(TRICKY, {"t": "t1", "withHand": False, "noTeams": True}, None, id="skipped"),
]


@pytest.mark.parametrize(("document", "variables", "name"), CASES)
def test_a_plan_builds_what_graphql_core_executes_for_every_viewer(
    document: str, variables: dict[str, Any], name: str | None
) -> None:
    built, plan = planned(document, variables, name)
    checked = 0
    for seed in (3, 17):
        for payload in payloads(seed, every=5):
            expected = reference(built, payload)
            assert expected.errors is None
            assert plan.run(payload) == expected.data
            checked += 1
    assert checked > 100


@pytest.mark.parametrize(("document", "variables", "name"), CASES)
def test_the_viewers_of_one_change_share_its_completed_public_parts(
    document: str, variables: dict[str, Any], name: str | None
) -> None:
    # As a table's feed completes one change for its viewers: one memo of subtrees for
    # the five (four seats, a spectator), whose views share the public fields.
    built, plan = planned(document, variables, name)
    saved = 0
    for first in range(0, len(every := payloads(3, every=7)), 5):
        group = every[first : first + 5]
        subtrees: Subtrees = {}
        alone = 0
        for payload in group:
            assert plan.run(payload, subtrees) == reference(built, payload).data
            own: Subtrees = {}
            plan.run(payload, own)
            alone += len(own)
        saved += alone - len(subtrees)
    # The public parts were completed once, then taken (the load test's document selects
    # no public list or object: nothing to share).
    assert saved > 0 if document != LOADTEST else saved == 0


def test_a_plan_keeps_the_order_of_the_fields_as_selected() -> None:
    built, plan = planned(TRICKY, {"t": "t1", "withHand": True, "noTeams": False})
    payload = payloads(5, every=40)[0]
    data = plan.run(payload)
    expected = reference(built, payload).data
    assert data is not None and expected is not None
    assert list(data["u"]) == list(expected["u"]) == ["__typename", "what", "event", "view"]
    assert list(data["u"]["view"]) == list(expected["u"]["view"])


def test_a_null_in_a_non_null_field_is_left_to_graphql_core() -> None:
    built, plan = planned(LOADTEST, {"t": "t1"})
    payload = payloads(5, every=40)[0]
    broken = GameUpdate(event=payload.event, seat=None, view=replace(payload.view, phase=None))
    assert reference(built, broken).errors
    assert plan.run(broken) is None


def test_a_value_of_the_wrong_kind_is_left_to_graphql_core() -> None:
    built, plan = planned(LOADTEST, {"t": "t1"})
    payload = payloads(5, every=40)[0]
    for wrong in (
        replace(payload.view, version="seven"),
        replace(payload.view, version=2**40),
        replace(payload.view, legal_plays="not a list"),
        replace(payload.view, hand_withheld="yes"),
    ):
        broken = GameUpdate(event=payload.event, seat=None, view=wrong)
        assert plan.run(broken) == _data_or_none(reference(built, broken))


@pytest.mark.fastpath
def test_an_enum_value_that_is_no_member_is_coerced_as_graphql_core_does() -> None:
    """Members' names are looked up inline; anything else takes the type's own coercion
    (a name string is accepted, a stray value is an error for graphql-core to report)."""
    built, plan = planned(LOADTEST, {"t": "t1"})
    assert Kind.ENUM in _kinds(plan._root)
    payload = payloads(5, every=40)[0]
    for odd in ("PLAYING", "NOT_A_PHASE", 3):
        broken = GameUpdate(event=payload.event, seat=None, view=replace(payload.view, phase=odd))
        assert plan.run(broken) == _data_or_none(reference(built, broken))


def _kinds(node: Node) -> set[Kind]:
    below = [_kinds(sub) for _, _, sub in node.fields] + ([_kinds(node.item)] if node.item else [])
    return {node.kind}.union(*below)


def _data_or_none(result: ExecutionResult) -> Any:
    return None if result.errors else result.data


def test_a_value_graphql_core_coerces_is_coerced_the_same() -> None:
    built, plan = planned("subscription { gameUpdates(tableId: 7) { view { id version } } }", {})
    payload = payloads(5, every=40)[0]
    numeric_id = GameUpdate(event=payload.event, seat=None, view=replace(payload.view, id=7))
    assert (
        plan.run(numeric_id)
        == reference(built, numeric_id).data
        == {"gameUpdates": {"view": {"id": "7", "version": 2}}}
    )


def test_a_selection_of_fields_with_resolvers_has_no_plan() -> None:
    # Table's fields have resolvers of their own; its plain `id` alone would do.
    with_resolver = "subscription { lobbyUpdates { event table { id turnSeconds } } }"
    assert compile_plan(executor(with_resolver, {})) is None
    assert compile_plan(executor("subscription { lobbyUpdates { event table { id } } }", {}))


def test_the_web_document_really_selects_the_whole_game_view() -> None:
    # Guards the first case: the web client's selection is the big one.
    text = web_document()
    fields = re.search(r"fragment GameFields on GameView \{(.*?)\n\}", text, re.S)
    assert fields is not None and "history" in fields.group(1) and "seats" in fields.group(1)
