"""Process-level tuning for a long-running server with many live subscriptions."""

from __future__ import annotations

import gc
from typing import Any

from graphql.execution.executor import Executor

_original_per_event_executor = Executor.build_per_event_executor


def _per_event_executor(self: Executor[Any], payload: Any) -> Executor[Any]:
    # graphql-core 3.3 copies the subscription's executor per event, sharing its memo of
    # collected sub-fields, which is keyed by the identity of per-event lists: every event
    # left ~3 KB behind until the subscription ended (gigabytes over 1000 long games).
    executor = _original_per_event_executor(self, payload)
    executor._relevant_sub_fields = {}
    return executor


def patch_graphql_core() -> None:
    """Stop the per-event memo leak of graphql-core subscriptions. Idempotent."""
    Executor.build_per_event_executor = _per_event_executor  # type: ignore[method-assign]


def _freeze_after_full_collection(phase: str, info: dict[str, Any]) -> None:
    if phase == "stop" and info.get("generation") == 2:
        gc.freeze()


def tame_garbage_collector() -> None:
    """Move what survived a full collection out of the collector's sight (`gc.freeze`).

    With a thousand live subscriptions the server tracks ~500,000 long-lived objects and
    each full collection paused the event loop 270-410 ms; frozen, they are not scanned
    again (reference counting still frees them). Idempotent."""
    if _freeze_after_full_collection not in gc.callbacks:
        gc.callbacks.append(_freeze_after_full_collection)
