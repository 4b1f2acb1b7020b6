"""A server process's phases as /readyz tells them (starting, ready, draining), and how
signals move it along (app/api/lifecycle.py); the drain itself, with a real process, is
in test_drain.py."""

from __future__ import annotations

import signal
from pathlib import Path

import httpx
from uvicorn import Config

from app.api.app import create_app
from app.api.lifecycle import DrainingServer, DrainTimings, Lifecycle, Phase
from app.settings import Settings


async def _no_app(scope: object, receive: object, send: object) -> None:
    return None


async def readyz(http: httpx.AsyncClient) -> tuple[int, object]:
    response = await http.get("/readyz")
    return response.status_code, response.json()


async def test_readyz_is_503_until_the_services_are_up_200_then_and_503_once_draining(
    tmp_path: Path,
) -> None:
    lifecycle = Lifecycle()
    app = create_app(
        Settings(database_url=f"sqlite+aiosqlite:///{tmp_path / 'spades.db'}"),
        lifecycle=lifecycle,
    )
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
        # No lifespan has run yet: the services are not started.
        assert await readyz(http) == (503, {"status": "starting"})
        async with app.router.lifespan_context(app):
            assert await readyz(http) == (200, {"status": "ready"})
            assert lifecycle.drain()
            assert await readyz(http) == (503, {"status": "draining"})
            # Liveness is another question: the process lives, its dependencies answer.
            assert (await http.get("/healthz")).status_code == 200
    assert lifecycle.phase is Phase.STOPPING


def test_a_first_signal_drains_a_second_shuts_down_and_a_third_interrupt_forces() -> None:
    lifecycle = Lifecycle(DrainTimings(drain_seconds=5, shutdown_seconds=30))
    server = DrainingServer(Config(app=_no_app), lifecycle)

    server.handle_exit(signal.SIGTERM, None)
    assert lifecycle.phase is Phase.DRAINING
    assert not server.should_exit and not lifecycle.window_over

    server.handle_exit(signal.SIGINT, None)
    assert server.should_exit and not server.force_exit

    server.handle_exit(signal.SIGINT, None)
    assert server.force_exit


def test_a_signal_during_the_start_leaves_the_process_draining_not_ready() -> None:
    lifecycle = Lifecycle()
    assert lifecycle.drain()
    lifecycle.ready()
    assert lifecycle.phase is Phase.DRAINING
    assert not lifecycle.drain()  # the clocks started at the first signal


def test_the_drain_window_never_outlasts_the_shutdown() -> None:
    timings = DrainTimings.of(Settings(drain_seconds=50, shutdown_seconds=10))
    assert timings == DrainTimings(drain_seconds=10, shutdown_seconds=10)
    assert DrainTimings.of(Settings()) == DrainTimings(drain_seconds=5, shutdown_seconds=30)


def test_no_time_is_left_once_the_shutdown_time_has_passed() -> None:
    lifecycle = Lifecycle(DrainTimings(drain_seconds=0, shutdown_seconds=0))
    lifecycle.drain()
    assert lifecycle.window_over
    assert lifecycle.remaining(reserve=1.0) == 0.0
