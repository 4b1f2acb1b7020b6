"""Direct operations (app/api/fastpath/direct.py): a one-field move or query over POST is answered
by its resolver and a compiled plan, with graphql-core's own answer wherever anything
goes wrong; and documents the plan cannot stand for are left to graphql-core."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from graphql import OperationDefinitionNode, parse

from app.api import fastpath
from app.api.fastpath.direct import DirectOperation, Replay, compile_direct
from app.api.graphql.schema import build_schema

from .test_hotpath import BID, CARD, FULL, SELECTIONS, next_move, players, seated, started


@pytest.fixture
def outcomes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """How each direct run ended: answered, replayed or not run."""
    seen: Counter[str] = Counter()
    run = DirectOperation.run

    async def counted(self: DirectOperation, *args: Any) -> Any:
        outcome = await run(self, *args)
        kind = "not run" if outcome is None else type(outcome).__name__
        seen[kind] += 1
        return outcome

    monkeypatch.setattr(DirectOperation, "run", counted)
    yield seen


async def test_every_move_is_answered_directly_and_alike(
    tmp_path: Path, outcomes: Counter[str]
) -> None:
    """The moves of a game, under every selection, by the direct path: the same bytes as
    graphql-core's (tests/server/test_hotpath.py compares them), and none replayed."""
    async with started(tmp_path) as (client, _app):
        tokens = await players(client)
        table = await seated(client, 44, tokens)
        for n in range(40):
            head, variables, seat = await next_move(client, table, tokens)
            selection = SELECTIONS[n % len(SELECTIONS)]
            name = "Bid" if head is BID else None
            status, content, _ = await client.raw(
                head + selection + " }", variables, tokens[seat], name=name
            )
            assert status == 200 and b'"errors"' not in content
        assert outcomes["ExecutionResult"] >= 40
        assert outcomes["Replay"] == outcomes["not run"] == 0


async def test_a_refused_move_is_replayed_by_graphql_core(
    tmp_path: Path, outcomes: Counter[str]
) -> None:
    async with started(tmp_path) as (client, _app):
        tokens = await players(client)
        table = await seated(client, 45, tokens)
        head, variables, seat = await next_move(client, table, tokens)
        query = head + "{ version } }"
        wrong = tokens[(seat + 1) % 4]
        _, content, _ = await client.both(query, variables, wrong)
        assert b"NOT_YOUR_TURN" in content and b'"path":[' in content
        assert outcomes["Replay"] == 1


async def test_variables_that_do_not_coerce_run_nothing_directly(
    tmp_path: Path, outcomes: Counter[str]
) -> None:
    async with started(tmp_path) as (client, _app):
        tokens = await players(client)
        table = await seated(client, 46, tokens)
        _, content, _ = await client.both(
            CARD + "{ version } }", {"t": table, "c": {"suit": "NOPE", "rank": "TWO"}}, tokens[0]
        )
        assert b"GRAPHQL_VALIDATION_FAILED" in content or b"errors" in content
        assert outcomes["not run"] == 1


class Strange:
    """A game view whose version is not an Int: graphql-core reports it."""

    def __init__(self, view: Any) -> None:
        self._view = view
        self.version = "not a number"

    def __getattr__(self, name: str) -> Any:
        return getattr(self._view, name)


async def test_a_value_the_plan_does_not_build_is_completed_by_graphql_core(
    tmp_path: Path, outcomes: Counter[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The move is made once, and the error about its value is graphql-core's."""
    answer = fastpath.move_answer
    monkeypatch.setattr(fastpath, "move_answer", lambda *args: Strange(answer(*args)))
    async with started(tmp_path) as (client, _app):
        tokens = await players(client)
        fast_table = await seated(client, 47, tokens)
        normal_table = await seated(client, 47, tokens)
        head, variables, seat = await next_move(client, fast_table, tokens)
        query = head + "{ turn version } }"
        fast = await client.raw(query, variables, tokens[seat])
        normal = await client.raw(query, {**variables, "t": normal_table}, tokens[seat], fast=False)
        assert fast == normal
        assert b"Int cannot represent" in fast[1] and b'"data":null' in fast[1]
        assert outcomes["Replay"] == 1
        # Made once: the next move is the next seat's.
        _, _, after = await next_move(client, fast_table, tokens)
        assert after == (seat + 1) % 4


def compiled(query: str) -> DirectOperation | None:
    schema = build_schema()
    document = parse(query)
    (operation,) = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    info = schema.execution_context_class.build_resolve_info
    return compile_direct(schema._schema, query, document, operation, info, schema)


@pytest.mark.parametrize(
    "query",
    [
        CARD + FULL + " }",
        "query($t: ID!) { game(tableId: $t) { version turn hand { suit rank } } }",
        "{ me { id username } }",
        "mutation($t: ID!) { revealHand(tableId: $t) { ...F } } fragment F on GameView { phase }",
    ],
)
def test_one_field_operations_are_direct(query: str) -> None:
    assert compiled(query) is not None


@pytest.mark.parametrize(
    "query",
    [
        "query($t: ID!, $h: Boolean!) { game(tableId: $t) { version hand @include(if: $h) "
        "{ suit } } }",
        "query($t: ID!) { game(tableId: $t) { version } me { id } }",
        "{ __typename }",
        "{ __schema { queryType { name } } }",
        "subscription($t: ID!) { gameUpdates(tableId: $t) { event } }",
    ],
)
def test_what_is_left_to_graphql_core(query: str) -> None:
    assert compiled(query) is None


def test_a_replay_answers_only_the_root_field() -> None:
    seen: list[str] = []

    class Info:
        def __init__(self, prev: object) -> None:
            self.path = type("P", (), {"prev": prev})()

    replay = Replay(value="stored")
    assert replay.resolve(lambda *_a, **_k: seen.append("next"), None, Info(None)) == "stored"  # type: ignore[arg-type]
    replay.resolve(lambda *_a, **_k: seen.append("next"), None, Info(object()))  # type: ignore[arg-type]
    assert seen == ["next"]
    failing = Replay(error=KeyError("x"))
    with pytest.raises(KeyError):
        failing.resolve(lambda *_a, **_k: None, None, Info(None))  # type: ignore[arg-type]
