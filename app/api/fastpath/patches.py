"""Process-level tuning for a long-running server with many live subscriptions."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Awaitable, Iterable, Sequence
from typing import Any, cast

from graphql import GraphQLSchema
from graphql.execution.executor import Executor
from graphql.pyutils import gather_with_cancel
from graphql.type import GraphQLResolveInfoHelpers
from strawberry.schema.schema_converter import CustomGraphQLEnumType

from app.api.fastpath.sharing import SharedPayload, execute_shared

_original_per_event_executor = Executor.build_per_event_executor
MEMBER_NAMES = "spades_member_names"  # the attribute of a fast enum type holding its names
_original_executor_init = Executor.__init__


class _SharedEventExecutor:
    """A per-event executor whose execution is shared with the other subscribers of the
    same payload (app/api/fastpath/sharing.py). graphql-core only calls `execute_operation`
    on it."""

    __slots__ = ("_executor", "_payload")

    def __init__(self, executor: Executor[Any], payload: SharedPayload) -> None:
        self._executor = executor
        self._payload = payload

    def execute_operation(self, serially: bool | None = None) -> Any:
        executor = self._executor
        return execute_shared(executor, self._payload, lambda: executor.execute_operation(serially))


def _per_event_executor(self: Executor[Any], payload: Any) -> Executor[Any]:
    # graphql-core 3.3 copies the subscription's executor per event, sharing its memo of
    # collected sub-fields, which is keyed by the identity of per-event lists: every event
    # left ~3 KB behind until the subscription ended (gigabytes over 1000 long games).
    executor = _original_per_event_executor(self, payload)
    executor._relevant_sub_fields = {}
    if getattr(payload, "shared_executions", None) is not None:
        return _SharedEventExecutor(executor, payload)  # type: ignore[return-value]
    return executor


def gather_async_work(values: Sequence[Awaitable[Any]]) -> Awaitable[list[Any]]:
    """Executor.gather_async_work without its executor (it never used it)."""
    return gather_with_cancel(*values)


def _helpers_of(executor: Executor[Any]) -> GraphQLResolveInfoHelpers:
    """The resolvers' async helpers of `executor`, holding it only weakly."""
    ref = weakref.ref(executor)

    def track(values: Sequence[Any]) -> None:
        target = ref()
        if target is not None:
            target.track_async_work(values)

    return GraphQLResolveInfoHelpers(gather=gather_async_work, track=track)


def _executor_init(self: Executor[Any], *args: Any, **kwargs: Any) -> None:
    # graphql-core 3.3 keeps GraphQLResolveInfoHelpers of the executor's own bound
    # methods: every executor referred to itself, so each operation's executor, with our
    # context, starlette's request and response, the variables and the results, waited
    # for the cycle collector (~700 objects per move and its fan-out, measured by
    # tests/server/test_garbage.py). Helpers that hold it weakly let reference counting
    # free all of it when the operation ends.
    _original_executor_init(self, *args, **kwargs)
    self.async_helpers = _helpers_of(self)


def patch_graphql_core() -> None:
    """Stop the per-event memo leak of graphql-core subscriptions and the executor's
    reference to itself; share the per-event executions of shared payloads. Idempotent."""
    Executor.build_per_event_executor = _per_event_executor  # type: ignore[method-assign]
    Executor.__init__ = _executor_init  # type: ignore[method-assign]


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


# Measured at 250 tables x 1 move/s (1,000 subscriptions, ~430,000 tracked objects):
# - default thresholds (700, 10, 10): per-table state lives ~1 s, long enough to reach
#   the oldest generation, so full collections ran every ~3 s and paused 270-320 ms;
# - freezing after each full collection made those cheap but leaked: whatever was alive
#   then (a WebSocket, a request in flight) and later died in a reference cycle was
#   never reclaimed (177,000 objects after 100 s of play);
# - a young generation of 20,000 objects lets most of that state die young: young
#   collections pause ~40 ms every ~1.3 s, full ones ~0.5 s every few minutes, nothing
#   leaks, and the server spent less CPU per move.
# Since the hot path leaves no reference cycles (graphql-core's executor no longer refers
# to itself: tests/server/test_garbage.py), what a move allocates is freed by reference
# counting, which also takes it off the young generation's count: young collections are
# rare, and the large threshold only bounds what a burst of new long-lived state (sockets
# opening) costs to scan.
#
# At human pace a table's state lives seconds, and that defeats the young count (new
# objects minus freed ones, old ones included): each move's new state is young and stays,
# the state it replaces is old and dies, so the count stands still while the young list
# grows. At 500 tables x 0.25 moves/s it reached 200,000-340,000 objects, whose collection
# paused the server 200-350 ms (scripts/loadtest/stallprobe.py): the p99. What fixed it
# was keeping fewer objects alive per change (feeds keep one change's projections, not
# eight: app/services/live/table_feeds.py). Collecting on a timer instead (every 0.25 s) made it
# worse: the survivors went to the middle generation, whose collections then paused
# ~120 ms every 3-4 s, and a full collection 806 ms.
YOUNG_THRESHOLD = 20_000
MIDDLE_THRESHOLD = 20


def tame_garbage_collector() -> None:
    """Freeze what the started server holds for good (modules, schema, settings) so that
    full collections never scan it again, and give new objects a larger young generation
    to die in before they are promoted."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, gc.get_threshold()[2])
