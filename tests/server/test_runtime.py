"""Process tuning: the graphql-core subscription memo no longer grows per event."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

from graphql import build_schema, parse, subscribe
from graphql.execution.executor import Executor

from app.api.fastpath.patches import patch_graphql_core

SCHEMA = build_schema(
    """
    type Item { a: Int b: Int }
    type Query { dummy: Int }
    type Subscription { items: [Item!]! }
    """
)


async def _events(count: int) -> AsyncIterator[dict[str, Any]]:
    for i in range(count):
        yield {"items": [{"a": i, "b": i}, {"a": i, "b": i}]}
        await asyncio.sleep(0)


async def _memo_size_after(events: int) -> int:
    built: list[Executor[Any]] = []
    original = Executor.build_per_event_executor

    def spy(self: Executor[Any], payload: Any) -> Executor[Any]:
        built.append(self)
        return original(self, payload)

    Executor.build_per_event_executor = spy  # type: ignore[method-assign]
    try:
        stream = subscribe(
            SCHEMA,
            parse("subscription { items { a b } }"),
            subscribe_field_resolver=lambda *_: _events(events),
        )
        if inspect.isawaitable(stream):
            stream = await stream
        assert isinstance(stream, AsyncIterator)
        async for _ in stream:
            pass
    finally:
        Executor.build_per_event_executor = original  # type: ignore[method-assign]
    return len(built[0]._relevant_sub_fields)


async def test_subscription_events_leave_nothing_in_the_shared_memo() -> None:
    patch_graphql_core()
    assert await _memo_size_after(50) == await _memo_size_after(5) == 0


GC_PROBE = """
import gc, weakref
from app.api.gc_tuning import YOUNG_THRESHOLD, tame_garbage_collector

class Node:
    pass

tame_garbage_collector()
assert gc.get_threshold()[0] == YOUNG_THRESHOLD
node = Node()
node.me = node  # a reference cycle: only the collector can free it
alive = weakref.ref(node)
gc.collect()  # a full collection while it is still in use (a live connection, say)
del node
gc.collect()
print("reclaimed" if alive() is None else "leaked")
"""


def test_a_cycle_that_outlived_a_full_collection_is_still_reclaimed() -> None:
    # In a fresh interpreter: the collector's settings are process-wide.
    result = subprocess.run(
        [sys.executable, "-c", GC_PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout.strip() == "reclaimed"


def test_every_enum_member_serializes_to_the_name_strawberry_gives_it() -> None:
    from strawberry.schema.schema_converter import CustomGraphQLEnumType

    from app.api.graphql.schema import schema

    enums = [t for t in schema._schema.type_map.values() if isinstance(t, CustomGraphQLEnumType)]
    assert len(enums) >= 8  # Suit, Rank, Seat, Team, BidKind, GamePhase, BotLevel, ...
    for enum_type in enums:
        for member in enum_type.wrapped_cls:
            expected = CustomGraphQLEnumType.coerce_output_value(enum_type, member)
            assert enum_type.serialize(member) == expected
            assert enum_type.coerce_output_value(member) == expected
            # A value given as the member's value or name still goes strawberry's way.
            assert enum_type.coerce_output_value(member.value) == expected
