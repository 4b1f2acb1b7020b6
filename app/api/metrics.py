"""Prometheus metrics: requests, errors, active subscriptions, moves, fan-out latency."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import Counter, Gauge, Histogram
from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

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


class MetricsExtension(SchemaExtension):
    """Counts operations by type and errors by code.

    An operation is counted when it starts executing: a subscription's operation hook
    only ends when its stream does (and not at all when the client goes away, which
    throws into the hook), so counting after it would miss subscriptions. Errors are
    counted from each result: the operation's result, or each streamed subscription
    result."""

    _counted = False  # set per operation (an instance serves one operation)
    _subscription = False  # known once executing (not re-derived per streamed result)

    def on_execute(self) -> Iterator[None]:
        self._counted = True
        operation_type = self.execution_context.operation_type
        self._subscription = operation_type is OperationType.SUBSCRIPTION
        REQUESTS.labels(operation_type.value).inc()
        yield

    def on_operation(self) -> Iterator[None]:
        self._counted = False
        yield
        if not self._counted:  # the document did not parse or validate
            REQUESTS.labels("invalid").inc()
        if not self._subscription:
            _count_errors(self.execution_context.result)

    def on_stream_result(self, result: Any) -> Iterator[None]:
        if self._subscription:
            _count_errors(result)
        yield


def _count_errors(result: object) -> None:
    for error in getattr(result, "errors", None) or ():
        code = (error.extensions or {}).get("code", "GRAPHQL_VALIDATION")
        ERRORS.labels(str(code)).inc()
