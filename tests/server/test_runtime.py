"""Process tuning: the graphql-core subscription memo no longer grows per event."""

from __future__ import annotations

import asyncio
import inspect
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from graphql import build_schema, parse, subscribe
from graphql.execution.executor import Executor

from app.api.runtime import patch_graphql_core

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
from app.api.runtime import YOUNG_THRESHOLD, tame_garbage_collector

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


YOUNG_PROBE = """
import asyncio, gc, sys
from app.api.runtime import collect_young_forever, tame_garbage_collector

tame_garbage_collector()
old = [[i] for i in range(60_000)]
gc.collect()  # now in the oldest generation

async def replace_old_state(timer: bool) -> int:
    # At human pace: each move's new state is kept, the state it replaces (old) dies, so
    # the collector's young count stands still while the young generation grows.
    task = asyncio.create_task(collect_young_forever(0.005)) if timer else None
    kept = []
    for i in range(30_000):
        kept.append([i])
        old.pop()
        if i % 500 == 0:
            await asyncio.sleep(0.002)
    if task is not None:
        task.cancel()
    return len(gc.get_objects(0))

print(asyncio.run(replace_old_state(sys.argv[1] == "timer")))
"""


def young_generation_after_replacing_old_state(mode: str) -> int:
    result = subprocess.run(
        [sys.executable, "-c", YOUNG_PROBE, mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return int(result.stdout.strip())


def test_timed_young_collections_keep_the_young_generation_small_when_old_state_dies() -> None:
    untimed = young_generation_after_replacing_old_state("count")
    timed = young_generation_after_replacing_old_state("timer")
    assert untimed > 25_000  # the count alone let it grow past its threshold
    assert timed < 5_000


CYCLE_PROBE = """
import asyncio, gc, sys, weakref
from app.api.runtime import collect_young_forever, tame_garbage_collector

class Node:
    pass

tame_garbage_collector()

async def main(generation: int) -> str:
    node = Node()
    node.me = node  # a reference cycle: only the collector can free it
    alive = weakref.ref(node)
    gc.collect(generation)  # it survives this collection (in use): now one generation older
    del node
    # As many new long-lived objects as CPython wants before a full collection.
    state = [Node() for _ in range(60_000)] if generation == 1 else []
    task = asyncio.create_task(collect_young_forever(0.002))
    for _ in range(1500):  # the timer alone: no allocation reaches the young threshold
        await asyncio.sleep(0.002)
        if alive() is None:
            break
    task.cancel()
    return "reclaimed" if alive() is None else "leaked"

print(asyncio.run(main(int(sys.argv[1]))))
"""


@pytest.mark.parametrize("grown_into", ["middle", "oldest"])
def test_timed_collections_also_reclaim_cycles_that_grew_old(grown_into: str) -> None:
    generation = {"middle": 0, "oldest": 1}[grown_into]
    result = subprocess.run(
        [sys.executable, "-c", CYCLE_PROBE, str(generation)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == "reclaimed"


def test_every_enum_member_serializes_to_the_name_strawberry_gives_it() -> None:
    from strawberry.schema.schema_converter import CustomGraphQLEnumType

    from app.api.schema import schema

    enums = [t for t in schema._schema.type_map.values() if isinstance(t, CustomGraphQLEnumType)]
    assert len(enums) >= 8  # Suit, Rank, Seat, Team, BidKind, GamePhase, BotLevel, ...
    for enum_type in enums:
        for member in enum_type.wrapped_cls:
            expected = CustomGraphQLEnumType.coerce_output_value(enum_type, member)
            assert enum_type.serialize(member) == expected
            assert enum_type.coerce_output_value(member) == expected
            # A value given as the member's value or name still goes strawberry's way.
            assert enum_type.coerce_output_value(member.value) == expected
