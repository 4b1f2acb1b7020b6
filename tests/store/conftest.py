"""Fixtures of the store tests: a new database of each kind the server runs on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.services import postgres_database

from .databases import database_url


@pytest.fixture(params=["sqlite", "postgres"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new database of each kind."""
    if request.param == "sqlite":
        yield database_url(tmp_path / "spades.db")
        return
    with postgres_database() as url:
        yield url
