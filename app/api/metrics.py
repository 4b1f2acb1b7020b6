"""Prometheus metrics: requests, errors, active subscriptions, moves, fan-out latency."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUESTS = Counter("spades_graphql_operations_total", "GraphQL operations run", ["type"])
ERRORS = Counter("spades_graphql_errors_total", "GraphQL errors answered", ["code"])
SUBSCRIPTIONS = Gauge("spades_active_subscriptions", "Live subscriptions", ["kind"])
MOVES = Counter("spades_moves_total", "Game moves applied by players", ["kind"])
FANOUT = Histogram(
    "spades_fanout_latency_seconds",
    "From a change's commit to its delivery to a subscriber (live phase: to the end of"
    " the table feed's pass that wrote it, once per pass)",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)


def count_errors(result: object) -> None:
    """Count the errors of one result by their `extensions.code`."""
    for error in getattr(result, "errors", None) or ():
        code = (error.extensions or {}).get("code", "GRAPHQL_VALIDATION")
        ERRORS.labels(str(code)).inc()
