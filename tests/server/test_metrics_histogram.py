"""The fan-out latency histogram reads at /metrics as prometheus_client's Histogram
would: the same cumulative buckets, count and sum for any values."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from app.api.metrics import TallyHistogram

BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
VALUES = st.one_of(st.sampled_from(BUCKETS), st.floats(0, 10, allow_nan=False))


def exposed(registry: CollectorRegistry) -> list[str]:
    """The exposition's sample lines, but the creation time only a library one has."""
    text = generate_latest(registry).decode()
    return [line for line in text.splitlines() if "_created" not in line]


@given(st.lists(VALUES, max_size=30))
def test_the_histogram_reads_as_prometheus_client_s(values: list[float]) -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    tally = TallyHistogram("spades_x_seconds", "x", BUCKETS, registry=ours)
    library = Histogram("spades_x_seconds", "x", buckets=BUCKETS, registry=theirs)
    for value in values:
        tally.observe(value)
        library.observe(value)
    assert exposed(ours) == exposed(theirs)


def test_a_value_on_a_bound_counts_in_that_bound_s_bucket() -> None:
    registry = CollectorRegistry()
    tally = TallyHistogram("spades_y_seconds", "y", (0.1, 1.0), registry=registry)
    tally.observe(0.1)
    assert 'spades_y_seconds_bucket{le="0.1"} 1.0' in exposed(registry)
