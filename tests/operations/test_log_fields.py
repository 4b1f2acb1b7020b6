"""Which operation and table a log line names: the operation's name (else its root
fields), and the table its root field is about, from a variable or the document."""

from __future__ import annotations

import pytest
from graphql import parse

from app.api.graphql.log_fields import Located, locate
from app.logs import LogFormat
from app.settings import load_settings


def located(query: str, name: str | None = None) -> Located | None:
    return locate(parse(query), name)


def test_an_anonymous_move_is_named_by_its_field_and_its_table_by_its_variable() -> None:
    found = located("mutation($t: ID!) { playCard(tableId: $t, card: $c) { version } }")
    assert found == Located("playCard", table_variable="t")
    assert found.table_id({"t": "abc", "c": {"suit": "SPADES"}}) == "abc"
    assert found.table_id({"t": 3}) is None and found.table_id(None) is None


def test_a_named_operation_keeps_its_name_and_a_literal_table_id() -> None:
    found = located('query Seat { table(id: "t1") { id } game(tableId: "t2") { version } }')
    assert found == Located("Seat", table_literal="t1")


def test_the_operation_asked_for_is_the_one_located() -> None:
    document = "query A { lobby { id } } mutation B($x: ID!) { leaveTable(tableId: $x) }"
    assert located(document, "B") == Located("B", table_variable="x")
    assert located(document) is None  # two operations and no name: none is run
    assert located("{ lobby { id } leaderboard { edges { cursor } } }") == Located(
        "lobby,leaderboard"
    )


@pytest.mark.parametrize(("value", "expected"), [("", LogFormat.TEXT), ("JSON", LogFormat.JSON)])
def test_the_log_format_is_text_unless_json_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: LogFormat
) -> None:
    monkeypatch.setenv("SPADES_LOG_FORMAT", value)
    assert load_settings().log_format is expected
