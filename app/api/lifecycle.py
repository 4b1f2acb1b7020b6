"""A server process's life as a load balancer sees it (starting, ready, draining,
stopping), and its graceful shutdown on SIGTERM or SIGINT, done by uvicorn's own.

On the signal: `/readyz` answers 503 at once; new connections are still accepted for
`SPADES_DRAIN_SECONDS`, so that a load balancer polling `/readyz` takes the process out
before anything is refused; then uvicorn's shutdown runs as it always does: the listening
socket is closed (new connections are refused), every request under way finishes, every
WebSocket is closed with 1012 (service restart), and the app's lifespan ends (the
services let the work under way finish, then stop). The process exits 0 within
`SPADES_SHUTDOWN_SECONDS` of the signal, whatever is left.

The drain is a subclass of uvicorn's `Server` (its signal handler and its main loop's
tick), run by `spades serve` directly, or in each worker of `--workers N`.
"""

from __future__ import annotations

import enum
import functools
import logging
import os
import signal
import socket
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType
from unittest import mock

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import multiprocess

from app.processes import die_with_parent
from app.settings import Settings, load_settings

log = logging.getLogger("app.server")

# Kept from the shutdown budget for the app's own end (stopping the services, closing
# the database and the broker) after the requests and WebSockets are done.
STOP_RESERVE_SECONDS = 1.0


class Phase(enum.Enum):
    """Where a server process is in its life; `/readyz` is 200 only when READY."""

    STARTING = "starting"
    READY = "ready"
    DRAINING = "draining"
    STOPPING = "stopping"


@dataclass(frozen=True, slots=True)
class DrainTimings:
    """How long a drain accepts new connections, and how long the whole shutdown may take
    (both from the signal)."""

    drain_seconds: float = 5.0
    shutdown_seconds: float = 30.0

    @classmethod
    def of(cls, settings: Settings) -> DrainTimings:
        """The timings `settings` ask for (the window never outlasts the shutdown)."""
        shutdown = max(0.0, settings.shutdown_seconds)
        return cls(min(max(0.0, settings.drain_seconds), shutdown), shutdown)


class Lifecycle:
    """One server process's phase and the clock of its drain."""

    def __init__(self, timings: DrainTimings | None = None) -> None:
        self.timings = timings or DrainTimings()
        self.phase = Phase.STARTING
        self.signalled_at: float | None = None  # monotonic time of the first signal

    def ready(self) -> None:
        """The services are up: take new work (unless a signal came during the start)."""
        if self.phase is Phase.STARTING:
            self.phase = Phase.READY

    def drain(self) -> bool:
        """A shutdown signal: stop being ready, start the clocks. False if already begun."""
        if self.signalled_at is not None:
            return False
        self.signalled_at = time.monotonic()
        self.phase = Phase.DRAINING
        return True

    def stopping(self) -> None:
        """New connections are refused from now on; what was accepted is finishing."""
        self.phase = Phase.STOPPING

    @property
    def window_over(self) -> bool:
        """A drain began and its window for new connections has passed."""
        return (
            self.signalled_at is not None
            and time.monotonic() - self.signalled_at >= self.timings.drain_seconds
        )

    def remaining(self, reserve: float = 0.0) -> float:
        """Seconds left before the process must be gone, less `reserve` (never negative);
        with no signal, the whole shutdown budget."""
        if self.signalled_at is None:
            left = self.timings.shutdown_seconds
        else:
            left = self.signalled_at + self.timings.shutdown_seconds - time.monotonic()
        return max(0.0, left - reserve)


@functools.cache
def process_lifecycle() -> Lifecycle:
    """The lifecycle of this process (one per process: signals are per process)."""
    return Lifecycle(DrainTimings.of(load_settings()))


class DrainingServer(uvicorn.Server):
    """uvicorn's server, with a drain before its shutdown: a first SIGTERM or SIGINT
    starts the drain instead of the shutdown; the shutdown starts when the drain's window
    has passed (or at a second signal; a third SIGINT forces the exit, as in uvicorn).
    The signal is not raised again after the shutdown (as uvicorn does for whoever runs
    it), so the process exits 0."""

    def __init__(self, config: uvicorn.Config, lifecycle: Lifecycle) -> None:
        super().__init__(config)
        self.lifecycle = lifecycle
        self._announced = False

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        # A signal handler: set flags only (logging here could deadlock on its lock).
        if self.lifecycle.drain():
            return
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        self.should_exit = True

    async def on_tick(self, counter: int) -> bool:
        if self.lifecycle.signalled_at is not None and not self._announced:
            self._announced = True
            self._begin_drain()
        if self.lifecycle.window_over:
            return True
        return await super().on_tick(counter)

    def _begin_drain(self) -> None:
        timings = self.lifecycle.timings
        log.info(
            "draining: /readyz answers 503; new connections are accepted for %.1f s more, "
            "then refused; exit within %.1f s",
            timings.drain_seconds,
            timings.shutdown_seconds,
        )
        overdue = threading.Timer(self.lifecycle.remaining(), _exit_overdue)
        overdue.daemon = True
        overdue.start()

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's shutdown, its wait for requests and WebSockets bounded by what is
        left of the budget (less the app's own end)."""
        self.lifecycle.drain()  # the main loop can end without a signal (--limit-max-requests)
        self.lifecycle.stopping()
        # uvicorn types it int; asyncio.timeout takes a float.
        self.config.timeout_graceful_shutdown = self.lifecycle.remaining(  # type: ignore[assignment]
            STOP_RESERVE_SECONDS
        )
        await super().shutdown(sockets)


def _exit_overdue() -> None:
    log.error("shutdown: SPADES_SHUTDOWN_SECONDS passed before the end: exiting now")
    logging.shutdown()
    os._exit(0)


class DrainingProcess(multiprocess.Process):
    """A worker of `--workers N`: a DrainingServer, and it dies with its supervisor."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets)
        self.supervisor_pid = os.getpid()

    def target(self, sockets: list[socket.socket] | None = None) -> None:  # pragma: no cover
        die_with_parent(self.supervisor_pid)
        super().target(sockets)

    @property
    def server(self) -> uvicorn.Server:
        if self._server is None:
            self._server = DrainingServer(self.config, process_lifecycle())
        return self._server


def run(config: uvicorn.Config) -> None:
    """Run uvicorn with `config` (as `uvicorn.run` does), each server process draining on
    SIGTERM and SIGINT. With several workers, uvicorn's supervisor passes the signal on
    to every worker, and each drains."""
    if config.workers > 1:
        sock = config.bind_socket()
        # uvicorn's supervisor makes its workers from this name, at start and when one dies.
        with mock.patch.object(multiprocess, "Process", DrainingProcess):
            multiprocess.Multiprocess(config, sockets=[sock]).run()
        return
    server = DrainingServer(config, process_lifecycle())
    server.run()
    if not server.started:
        sys.exit(STARTUP_FAILURE)
