"""Shared fixtures: a live server (real uvicorn, real SQLite file) and signed-up players."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import LiveServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """One server process per test module."""
    live = LiveServer(tmp_path_factory.mktemp("server") / "spades.db")
    live.start()
    yield live
    live.stop()


@pytest.fixture
def fresh_server(tmp_path: Path) -> Iterator[LiveServer]:
    """A server of its own for a test that stops, kills or restarts it."""
    live = LiveServer(tmp_path / "spades.db")
    live.start()
    yield live
    live.stop()
