"""Prometheus metrics: requests, errors, active subscriptions, moves, fan-out latency."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from math import inf
from typing import cast

from prometheus_client import REGISTRY, Counter, Gauge
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.utils import floatToGoString

# prometheus_client's own formatting of a bucket's bound (`+Inf`, `1.0`), typed.
_bound_text = cast(Callable[[float], str], floatToGoString)


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


class TallyHistogram(Collector):
    """A Prometheus histogram observed by the event loop's thread only: a bisect and two
    additions per value, where prometheus_client's Histogram walked its buckets in
    Python under a lock (once per move's fan-out). Exported at scrape time as
    `<name>_bucket` (cumulative, `le`), `<name>_count` and `<name>_sum`, like a
    prometheus_client Histogram."""

    def __init__(
        self,
        name: str,
        documentation: str,
        buckets: Sequence[float],
        registry: CollectorRegistry = REGISTRY,
    ) -> None:
        self._name = name
        self._documentation = documentation
        self._bounds = tuple(sorted(buckets))
        self._counts = [0] * (len(self._bounds) + 1)  # the last: over every bound (+Inf)
        self._sum = 0.0
        registry.register(self)

    def observe(self, value: float) -> None:
        """Count one value in its bucket (the first bound it does not exceed)."""
        self._counts[bisect_left(self._bounds, value)] += 1
        self._sum += value

    def collect(self) -> Iterator[HistogramMetricFamily]:
        """The cumulative buckets, count and sum, for the registry's scrape."""
        running = 0
        cumulative: list[tuple[str, float]] = []
        for bound, count in zip((*self._bounds, inf), self._counts, strict=True):
            running += count
            cumulative.append((_bound_text(bound), running))
        family = HistogramMetricFamily(self._name, self._documentation)
        family.add_metric([], cumulative, self._sum)
        yield family


REQUESTS = TallyCounter("spades_graphql_operations", "GraphQL operations run", "type")
ERRORS = Counter("spades_graphql_errors_total", "GraphQL errors answered", ["code"])
SUBSCRIPTIONS = Gauge("spades_active_subscriptions", "Live subscriptions", ["kind"])
PARKED = Gauge(
    "spades_parked_subscriptions",
    "Live subscriptions waiting with no task of their own (app/services/live/followed.py)",
)
MOVES = TallyCounter("spades_moves", "Game moves applied by players", "kind")
FANOUT = TallyHistogram(
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
