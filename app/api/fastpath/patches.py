"""Patches to graphql-core 3.3's executor (pinned in pyproject.toml; checked by
tests/test_dependencies.py): its per-event memo leak and its reference to itself fixed,
and the per-event executions of a shared payload shared (app/api/fastpath/sharing.py).
Applied by the fast path's seam only (app/api/fastpath/__init__.py)."""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Sequence
from typing import Any

from graphql.execution.executor import Executor
from graphql.pyutils import gather_with_cancel
from graphql.type import GraphQLResolveInfoHelpers

from app.api.fastpath.sharing import SharedPayload, execute_shared

_original_per_event_executor = Executor.build_per_event_executor
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
