"""Enum outputs by lookup: strawberry serializes an enum member with a loop comparing
`.value` with each of the type's values (Python properties), up to 26 calls per Rank.
Here each member's name is asked of strawberry once and then found by identity."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from graphql import GraphQLSchema
from strawberry.schema.schema_converter import CustomGraphQLEnumType

MEMBER_NAMES = "spades_member_names"  # the attribute of a fast enum type holding its names


def _fast_enum_output(enum_type: CustomGraphQLEnumType) -> None:
    # strawberry finds an enum member's name by a loop comparing `.value` with each of the
    # type's values (Python properties): a Rank cost up to 26 calls, ~150 per move's
    # fan-out. The answer for each member is the same every time: asked once here, then
    # found by the member's identity (members live as long as the process, so no other
    # object shares their id). Anything else still goes through strawberry's code.
    slow = enum_type.coerce_output_value
    names = {id(member): slow(member) for member in cast(Iterable[Any], enum_type.wrapped_cls)}

    def coerce_output_value(value: Any) -> Any:
        name = names.get(id(value))
        return name if name is not None else slow(value)

    enum_type.coerce_output_value = coerce_output_value  # type: ignore[method-assign,assignment]
    enum_type.serialize = coerce_output_value  # type: ignore[method-assign,assignment]
    # Compiled plans (app/api/fastpath/plans.py) look the names up inline.
    setattr(enum_type, MEMBER_NAMES, names)


def member_names(enum_type: object) -> dict[int, Any] | None:
    """The names of a fast enum's members by their id (see `_fast_enum_output`)."""
    names = getattr(enum_type, MEMBER_NAMES, None)
    return names if isinstance(names, dict) else None


def fast_enum_outputs(schema: GraphQLSchema) -> None:
    """Serialize the schema's strawberry enums by a lookup of each member's name."""
    for named in schema.type_map.values():
        if isinstance(named, CustomGraphQLEnumType):
            _fast_enum_output(named)
