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


# Measured at 250 tables x 1 move/s (1,000 subscriptions, ~430,000 tracked objects):
# - default thresholds (700, 10, 10): per-table state lives ~1 s, long enough to reach
#   the oldest generation, so full collections ran every ~3 s and paused 270-320 ms;
# - freezing after each full collection made those cheap but leaked: whatever was alive
#   then (a WebSocket, a request in flight) and later died in a reference cycle was
#   never reclaimed (177,000 objects after 100 s of play);
# - a young generation of 20,000 objects lets most of that state die young: young
#   collections pause ~40 ms every ~1.3 s, full ones ~0.5 s every few minutes, nothing
#   leaks, and the server spent less CPU per move.
YOUNG_THRESHOLD = 20_000
MIDDLE_THRESHOLD = 20


def tame_garbage_collector() -> None:
    """Freeze what the started server holds for good (modules, schema, settings) so that
    full collections never scan it again, and give new objects a larger young generation
    to die in before they are promoted."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_THRESHOLD, gc.get_threshold()[2])
