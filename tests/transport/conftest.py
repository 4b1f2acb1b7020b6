"""A live server for the transport tests, with a deal seed allowed and a small persisted
query cache (to see its bound)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.server import LiveServer

APQ_ENTRIES = 5


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server per module, keeping at most APQ_ENTRIES persisted queries."""
    live = LiveServer(
        tmp_path_factory.mktemp("transport") / "spades.db",
        env={"SPADES_PERSISTED_QUERIES": str(APQ_ENTRIES)},
    )
    live.start()
    yield live
    live.stop()
