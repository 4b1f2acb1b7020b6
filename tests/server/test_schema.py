"""The committed schema.graphql is the schema the code builds and the one the live server
serves, and it holds the contract's core schema (docs/api.md) exactly: every listed type, field,
argument, enum value and default, with only optional additions around them."""

from __future__ import annotations

import re

import graphql
import pytest
from graphql import (
    DocumentNode,
    EnumTypeDefinitionNode,
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    InputObjectTypeDefinitionNode,
    ObjectTypeDefinitionNode,
    Undefined,
)

from app.api.graphql.schema import schema_text
from tests.support.scenarios import post_raw
from tests.support.server import ROOT, LiveServer

SCHEMA_FILE = ROOT / "schema.graphql"
# The API guide's "Core schema" section: the contract's core, which the server must serve
# exactly (more may be added around it).
API_MD = ROOT / "docs" / "api.md"
CORE_BLOCK = re.compile(r"^## Core schema\n.*?^```graphql\n(.*?)^```", re.DOTALL | re.MULTILINE)


def normalized(schema: GraphQLSchema) -> str:
    """SDL printed the same way for any schema object: types sorted by name."""
    return graphql.print_schema(graphql.lexicographic_sort_schema(schema))


def core_sdl() -> str:
    """The SDL block of the API guide's "Core schema" section."""
    match = CORE_BLOCK.search(API_MD.read_text(encoding="utf-8"))
    assert match is not None, f"{API_MD} has no `## Core schema` section with a graphql block"
    return match.group(1)


@pytest.fixture(scope="module")
def committed() -> GraphQLSchema:
    """The committed schema.graphql."""
    return graphql.build_schema(SCHEMA_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def core() -> DocumentNode:
    """The contract's core schema, parsed."""
    return graphql.parse(core_sdl())


def test_the_committed_schema_is_the_one_the_code_builds() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "schema.graphql is stale: regenerate it from app.api.graphql.schema.schema_text()"
    )


async def test_the_live_server_serves_the_committed_schema(
    server: LiveServer, committed: GraphQLSchema
) -> None:
    query = graphql.get_introspection_query(
        descriptions=True,
        specified_by_url=True,
        directive_is_repeatable=True,
        input_value_deprecation=True,
    )
    response = await post_raw(server, {"query": query})  # introspection needs no sign-in
    assert response.status_code == 200, response.text
    answer = response.json()
    assert "errors" not in answer, answer
    served = graphql.build_client_schema(answer["data"])
    assert normalized(served) == normalized(committed)


def test_the_core_schema_block_was_found_and_parses(core: DocumentNode) -> None:
    names = {d.name.value for d in core.definitions if hasattr(d, "name")}
    assert {"Seat", "GameView", "Query", "Mutation", "Subscription"} <= names


def type_text(node: graphql.TypeNode) -> str:
    """`[Card!]!`-style text of a type reference in the core block."""
    return graphql.print_ast(node)


def test_core_enums_have_exactly_the_contract_values(
    core: DocumentNode, committed: GraphQLSchema
) -> None:
    for node in core.definitions:
        if isinstance(node, EnumTypeDefinitionNode):
            served = committed.get_type(node.name.value)
            assert isinstance(served, GraphQLEnumType), node.name.value
            assert list(served.values) == [v.name.value for v in node.values or ()], node.name.value


# docs/api.md, "Live tables, rematch and chat": these core fields became enums (same JSON).
RETYPED = {
    "GameUpdate.event": "GameEvent!",
    "LobbyUpdate.event": "LobbyEvent!",
    "Notification.event": "NotificationEvent!",
    "Table.status": "TableStatus!",
}
LIVE_ENUMS = {
    "TableStatus": ["WAITING", "PLAYING", "FINISHED", "CLOSED"],
    "BotLevel": ["BASIC", "STANDARD", "EXPERT"],
    "LobbyEvent": ["TABLE_CREATED", "TABLE_UPDATED", "TABLE_REMOVED"],
}
# The game changes docs/api.md names; the server may name more (new kinds of change).
CONTRACT_GAME_EVENTS = [
    "SNAPSHOT",
    "SEAT_TAKEN",
    "SEAT_LEFT",
    "GAME_STARTED",
    "BID_PLACED",
    "HAND_REVEALED",
    "CARDS_PASSED",
    "CARD_PLAYED",
    "TRICK_WON",
    "HAND_SCORED",
    "HAND_DEALT",
    "PLAYER_REPLACED",
    "GAME_OVER",
    "TURN_TIMED_OUT",
    "SEAT_RECLAIMED",
    "REMATCH_REQUESTED",
    "REMATCH_STARTED",
    "TABLE_CLOSED",
]


def test_live_table_enums_hold_the_contract_names(committed: GraphQLSchema) -> None:
    for name, values in LIVE_ENUMS.items():
        served = committed.get_type(name)
        assert isinstance(served, GraphQLEnumType), name
        assert list(served.values) == values, name
    events = committed.get_type("GameEvent")
    assert isinstance(events, GraphQLEnumType)
    assert set(CONTRACT_GAME_EVENTS) <= set(events.values)
    for where, retyped in RETYPED.items():
        type_name, field_name = where.split(".")
        served = committed.get_type(type_name)
        assert isinstance(served, GraphQLObjectType), type_name
        assert str(served.fields[field_name].type) == retyped, where


def test_core_object_types_have_every_contract_field_and_argument(
    core: DocumentNode, committed: GraphQLSchema
) -> None:
    for node in core.definitions:
        if not isinstance(node, ObjectTypeDefinitionNode):
            continue
        name = node.name.value
        served = committed.get_type(name)
        assert isinstance(served, GraphQLObjectType), name
        for field in node.fields or ():
            where = f"{name}.{field.name.value}"
            assert field.name.value in served.fields, f"missing {where}"
            served_field = served.fields[field.name.value]
            assert str(served_field.type) == RETYPED.get(where, type_text(field.type)), where
            listed = {a.name.value: a for a in field.arguments or ()}
            for arg_name, arg in listed.items():
                assert arg_name in served_field.args, f"missing argument {where}({arg_name})"
                assert str(served_field.args[arg_name].type) == type_text(arg.type), (
                    f"{where}({arg_name})"
                )
            # Extra arguments are fine, as long as a client of the contract can omit them
            # (nullable, or with a default such as addBot's `level: BotLevel = BASIC`).
            for arg_name, served_arg in served_field.args.items():
                if arg_name not in listed:
                    node_default = served_arg.ast_node and served_arg.ast_node.default_value
                    omittable = served_arg.default_value is not Undefined or bool(node_default)
                    assert omittable or not isinstance(served_arg.type, GraphQLNonNull), (
                        f"{where}({arg_name}) is required but not in the contract"
                    )


def test_core_input_types_have_every_contract_field_and_default(
    core: DocumentNode, committed: GraphQLSchema
) -> None:
    for node in core.definitions:
        if not isinstance(node, InputObjectTypeDefinitionNode):
            continue
        name = node.name.value
        served = committed.get_type(name)
        assert isinstance(served, GraphQLInputObjectType), name
        listed = {f.name.value: f for f in node.fields or ()}
        for field_name, field in listed.items():
            where = f"{name}.{field_name}"
            assert field_name in served.fields, f"missing {where}"
            served_field = served.fields[field_name]
            assert str(served_field.type) == type_text(field.type), where
            if field.default_value is not None:
                node_served = served_field.ast_node
                served_default = node_served.default_value if node_served is not None else None
                assert served_default is not None, f"{where} has no default"
                assert graphql.print_ast(served_default) == graphql.print_ast(
                    field.default_value
                ), where
        for field_name, served_field in served.fields.items():
            if field_name not in listed:
                assert not isinstance(served_field.type, GraphQLNonNull), (
                    f"{name}.{field_name} is required but not in the contract"
                )


# Object types that are values, not things (docs/api.md: "every object type that stands for
# one thing has `id: ID!`"): a part of their parent, an event, a page's plumbing, a root.
VALUE_TYPES = {
    "AuthPayload", "Bid", "Card", "GameSummaryConnection", "GameSummaryEdge", "GameUpdate",
    "HandResult", "LeaderboardConnection", "LeaderboardEdge", "LeaderboardEntry",
    "LobbyUpdate", "Mutation", "Notification", "PageInfo", "Play", "PlayerStats", "Query",
    "Rating", "Subscription", "Trick", "ReportConnection", "ReportEdge", "Mute",
}  # fmt: skip


def test_every_type_that_stands_for_one_thing_has_a_stable_id(committed: GraphQLSchema) -> None:
    """Normalized client caches (Apollo, urql Graphcache) key entities by `id` with no
    configuration: every object type but the listed values has `id: ID!`."""
    objects = {
        name: kind
        for name, kind in committed.type_map.items()
        if isinstance(kind, GraphQLObjectType) and not name.startswith("__")
    }
    assert set(objects) >= VALUE_TYPES, VALUE_TYPES - set(objects)
    missing = [
        name
        for name, kind in objects.items()
        if name not in VALUE_TYPES and str(getattr(kind.fields.get("id"), "type", "")) != "ID!"
    ]
    assert missing == []
