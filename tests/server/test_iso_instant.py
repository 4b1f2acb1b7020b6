"""Instants on the wire (turn deadlines, chat, presence): ISO-8601 UTC with milliseconds,
truncated, exactly as strftime wrote them before."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from app.api.graphql.game_view import iso_instant

# From 1970 to the last second of 9999, to the microsecond and beyond.
EPOCHS = st.floats(min_value=0, max_value=253402300799.0, allow_nan=False)


def by_strftime(epoch: float) -> str:
    moment = datetime.fromtimestamp(epoch, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@given(EPOCHS)
def test_an_instant_reads_as_strftime_wrote_it(epoch: float) -> None:
    assert iso_instant(epoch) == by_strftime(epoch)


def test_an_instant_keeps_milliseconds_and_ends_in_z() -> None:
    assert iso_instant(1764892812.9996) == "2025-12-05T00:00:12.999Z"
    assert iso_instant(0) == "1970-01-01T00:00:00.000Z"
