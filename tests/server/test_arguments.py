"""Compiled arguments (app/api/fastpath/arguments.py) give exactly what graphql-core's coercion
and strawberry's conversion give, or nothing (the normal path then answers): for any
variable values, well-formed or not."""

from __future__ import annotations

from typing import Any

from graphql import GraphQLError, OperationDefinitionNode, parse
from graphql.execution.values import get_argument_values, get_variable_values
from hypothesis import given, settings
from hypothesis import strategies as st
from strawberry.types.arguments import convert_arguments

from app.api.fastpath.arguments import ArgumentPlan
from app.api.graphql.schema import build_schema
from app.api.graphql.types import CardInput, Rank, Suit

from .test_direct import compiled

SCHEMA = build_schema()
CARD = (
    "mutation($t: ID!, $c: CardInput!, $e: Int) "
    "{ playCard(tableId: $t, card: $c, expectedVersion: $e) { version } }"
)
BID = "mutation($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) { version } }"
LITERAL_BID = (
    "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) { version } }"
)
JOIN = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
BOT = "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }"
DOCUMENTS = (CARD, BID, LITERAL_BID, JOIN, BOT)


def reference(query: str, variables: dict[str, Any]) -> dict[str, Any] | None:
    """The resolver's keyword arguments by graphql-core and strawberry (None: an error)."""
    schema = SCHEMA._schema
    document = parse(query)
    (operation,) = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    coerced = get_variable_values(schema, operation.variable_definitions or (), variables)
    if isinstance(coerced, list):
        return None
    node = operation.selection_set.selections[0]
    root = schema.mutation_type
    assert root is not None
    field = root.fields[node.name.value]  # type: ignore[attr-defined]
    try:
        values = get_argument_values(field, node, coerced)  # type: ignore[arg-type]
    except GraphQLError:
        return None
    definition = field.extensions["strawberry-definition"]
    converter = SCHEMA.schema_converter
    return convert_arguments(
        values, definition.arguments, converter.scalar_registry, SCHEMA.config, None
    )


def plan_of(query: str) -> ArgumentPlan:
    direct = compiled(query)
    assert direct is not None and direct.arguments is not None
    return direct.arguments


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**33), 2**33) | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=6,
)
NAMES = st.sampled_from(["HEARTS", "SPADES", "TEN", "ACE", "NORTH", "TRICKS", "NIL", "x", ""])
CARDISH = st.fixed_dictionaries(
    {"suit": NAMES | JSON, "rank": NAMES | JSON},
    optional={"extra": JSON},
)
BIDISH = st.fixed_dictionaries({"kind": NAMES | JSON}, optional={"tricks": JSON})
VALUES = {
    "t": st.text(max_size=5) | JSON,
    "c": CARDISH | JSON,
    "e": st.integers(-(2**32), 2**32) | JSON,
    "b": BIDISH | JSON,
    "s": NAMES | JSON,
}


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(DOCUMENTS),
    st.fixed_dictionaries({}, optional=VALUES),
)
def test_compiled_arguments_are_the_libraries_own_or_nothing(
    query: str, variables: dict[str, Any]
) -> None:
    fast = plan_of(query).convert(variables)
    expected = reference(query, variables)
    if fast is not None:
        assert expected is not None
        assert fast == expected


def test_well_formed_moves_are_converted_by_the_plan() -> None:
    card = {"suit": "HEARTS", "rank": "TEN"}
    plan = plan_of(CARD)
    for variables in ({"t": "table", "c": card}, {"t": "table", "c": card, "e": 7}):
        assert plan.convert(variables) == reference(CARD, variables)
    assert plan.convert({"t": "t", "c": card}) == {
        "table_id": "t",
        "card": CardInput(suit=Suit.HEARTS, rank=Rank.TEN),
    }
    assert plan_of(LITERAL_BID).convert({"t": "t"}) == reference(LITERAL_BID, {"t": "t"})
    assert plan_of(JOIN).convert({"t": "t", "s": "NORTH"}) is not None


def test_a_value_of_another_json_type_is_never_taken_for_a_remembered_one() -> None:
    plan = plan_of(BID)
    good = {"t": "t", "b": {"kind": "TRICKS", "tricks": 1}}
    assert plan.convert(good) == reference(BID, good)
    twin = {"t": "t", "b": {"kind": "TRICKS", "tricks": True}}  # True == 1 in Python
    assert reference(BID, twin) is None
    assert plan.convert(twin) is None


def test_what_the_plan_leaves_to_the_normal_path() -> None:
    plan = plan_of(CARD)
    card = {"suit": "HEARTS", "rank": "TEN"}
    for variables in (
        {"c": card},  # a required variable missing
        {"t": None, "c": card},  # null for a non-null
        {"t": 7, "c": card},  # an ID given as a number: coerced by graphql-core
        {"t": "t", "c": [card]},  # a list where an object is expected
        {"t": "t", "c": {"suit": "HEARTS"}},
        {"t": "t", "c": card, "e": 2**40},
    ):
        assert plan.convert(variables) is None
    bot = plan_of(BOT)  # `level` has a default: converted once, as strawberry does
    assert bot.convert({"t": "t", "s": "EAST"}) == reference(BOT, {"t": "t", "s": "EAST"})
