"""Prometheus metrics: requests, errors, active subscriptions, moves, fan-out latency."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import REGISTRY, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector


class Tally:
    """One labelled count of a `TallyCounter`: a plain int, bumped by the event loop's
    thread only (the hot path's counts: no lock, one call instead of prometheus' four;
    the hottest sites add to `count` themselves, no call at all)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0

    def inc(self) -> None:
        """Count one."""
        self.count += 1


class TallyCounter(Collector):
    """A Prometheus counter with one label whose counts are `Tally`s, read at scrape time
    (exported as `<name>_total`, like a prometheus_client Counter)."""

    def __init__(self, name: str, documentation: str, label: str) -> None:
        self._name = name
        self._documentation = documentation
        self._label = label
        self._tallies: dict[str, Tally] = {}
        REGISTRY.register(self)

    def labels(self, value: str) -> Tally:
        """The count of one label value (created at 0 on first use)."""
        tally = self._tallies.get(value)
        if tally is None:
            tally = self._tallies[value] = Tally()
        return tally

    def collect(self) -> Iterator[CounterMetricFamily]:
        """The counts, for the registry's scrape."""
        family = CounterMetricFamily(self._name, self._documentation, labels=[self._label])
        for value, tally in list(self._tallies.items()):
            family.add_metric([value], tally.count)
        yield family


REQUESTS = TallyCounter("spades_graphql_operations", "GraphQL operations run", "type")
ERRORS = Counter("spades_graphql_errors_total", "GraphQL errors answered", ["code"])
SUBSCRIPTIONS = Gauge("spades_active_subscriptions", "Live subscriptions", ["kind"])
PARKED = Gauge(
    "spades_parked_subscriptions",
    "Live subscriptions waiting with no task of their own (app/services/live/followed.py)",
)
MOVES = TallyCounter("spades_moves", "Game moves applied by players", "kind")
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
