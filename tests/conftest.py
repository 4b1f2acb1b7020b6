"""Shared fixtures: a live server (real uvicorn, real SQLite file) and signed-up players."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from app.settings import load_settings
from tests.support.server import LiveServer

# Under pytest-xdist (scripts/test runs workers with --dist loadgroup), tests that share
# something outside their own temporary directory run in one worker, one after another:
# the web tests build web/dist, the transport tests install tests/clients/node_modules.
# Everything else (each test with its own server, SQLite file or fresh PostgreSQL
# database; the machine's Redis, which no test stops: a test that stops Redis starts one
# of its own, tests/support/services.py PrivateRedis) spreads over the workers.
SHARED_DIRECTORIES: dict[str, str] = {
    "tests/web/": "web",
    "tests/transport/": "node",
}


def shared_resource(path: str) -> str | None:
    """The xdist group of a test that shares a machine-wide resource, if any."""
    for prefix, group in SHARED_DIRECTORIES.items():
        if path.startswith(prefix):
            return group
    return None


def pytest_configure(config: pytest.Config) -> None:
    """The markers of this suite."""
    config.addinivalue_line(
        "markers",
        "fastpath: a test of the fast path itself (app/api/fastpath/), which the libraries'"
        " own path does not have: skipped when the server runs with SPADES_FASTPATH=off",
    )
    config.addinivalue_line(
        "markers",
        "slow: an end-to-end test that starts, stops or restarts server processes and takes"
        " tens of seconds; it runs with the rest (CI included), and `-m 'not slow'` leaves"
        " it out while iterating",
    )


FASTPATH_OFF = pytest.mark.skip(reason="a test of the fast path, and SPADES_FASTPATH=off")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that share a resource with their xdist group (inert without xdist);
    skip the fast path's own tests when the fast path is off."""
    root = Path(str(config.rootpath))
    fastpath_on = load_settings().fastpath
    for item in items:
        if not fastpath_on and item.get_closest_marker("fastpath") is not None:
            item.add_marker(FASTPATH_OFF)
        path = Path(str(item.path)).relative_to(root).as_posix()
        group = shared_resource(path)
        if group is not None and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(group))


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
