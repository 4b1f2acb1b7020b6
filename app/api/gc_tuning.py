"""The garbage collector's settings for a long-running server with many live
subscriptions."""

from __future__ import annotations

import gc

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
