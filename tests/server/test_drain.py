"""A server told to stop (SIGTERM, SIGINT) drains: /readyz answers 503 at once, new
connections are still accepted for SPADES_DRAIN_SECONDS and refused after, every request
it accepted finishes, every WebSocket (either protocol) is closed with 1012, and the
process exits 0 within SPADES_SHUTDOWN_SECONDS, even when a client never finishes its
request, leaving no process behind (its EXPERT bots' pool)."""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.drain import (
    SERVICE_RESTART,
    close_code,
    readiness,
    refused_after,
    subscribed_socket,
)
from tests.support.processes import all_gone, wait_for, warm_expert_pool
from tests.support.scenarios import (
    GAME_UPDATES,
    PLACE_BID,
    assert_log_without_gaps,
    seat_four_humans,
)
from tests.support.server import LiveServer

DRAIN_SECONDS = 2.0
SHUTDOWN_SECONDS = 6.0


class HeldRequest:
    """A POST /graphql whose body is sent in two parts, the second only when released: the
    server has accepted the request, and it is under way until then."""

    def __init__(self, server: LiveServer, token: str | None, query: str, **variables: Any):
        self.server = server
        self.token = token
        self.body = json.dumps({"query": query, "variables": variables}).encode()
        self._sent = asyncio.Event()
        self._release = asyncio.Event()
        self._task: asyncio.Task[httpx.Response] | None = None

    async def _chunks(self) -> AsyncIterator[bytes]:
        half = len(self.body) // 2
        yield self.body[:half]
        self._sent.set()  # httpx asks for the next chunk once the first is written
        await self._release.wait()
        yield self.body[half:]

    async def start(self) -> None:
        """Send the headers and the first half of the body."""
        headers = {"content-type": "application/json"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"

        async def post() -> httpx.Response:
            async with httpx.AsyncClient(timeout=60) as client:
                return await client.post(
                    self.server.http_url, content=self._chunks(), headers=headers
                )

        self._task = asyncio.create_task(post())
        await asyncio.wait_for(self._sent.wait(), 10)
        await asyncio.sleep(0.2)  # the first part reaches the server

    async def finish(self) -> httpx.Response:
        """Send the rest of the body; the answer."""
        assert self._task is not None
        self._release.set()
        return await asyncio.wait_for(self._task, 30)

    async def abandon(self) -> None:
        """Give up on the request."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)


async def not_ready_within(server: LiveServer, seconds: float) -> dict[str, Any]:
    """Poll /readyz until it answers 503 (failing after `seconds`); its body."""
    deadline = time.monotonic() + seconds
    while True:
        status, body = await readiness(server)
        if status == 503:
            return body
        assert time.monotonic() < deadline, f"/readyz still {status} {body}"
        await asyncio.sleep(0.02)


@pytest.mark.slow
async def test_a_stopped_server_drains_finishes_what_it_accepted_and_exits_0_in_time(
    tmp_path: Path,
) -> None:
    server = LiveServer(
        tmp_path / "spades.db",
        env={
            "SPADES_DRAIN_SECONDS": str(DRAIN_SECONDS),
            "SPADES_SHUTDOWN_SECONDS": str(SHUTDOWN_SECONDS),
        },
    )
    server.start()
    stuck: HeldRequest | None = None
    try:
        table = await seat_four_humans(server)
        view = await table.view()
        mover = table.players[view["turn"]]
        if (await mover.game(table.table_id))["handWithheld"]:
            view = await mover.reveal(table.table_id)
        workers = await warm_expert_pool(server)
        assert await readiness(server) == (200, {"status": "ready"})

        # A bid whose request is under way when the signal comes (half its body has
        # arrived), and a request whose client never sends the rest of its body.
        bid = HeldRequest(
            server,
            mover.token,
            PLACE_BID,
            t=table.table_id,
            b={"kind": "TRICKS", "tricks": 3},
            v=view["version"],
        )
        await bid.start()
        stuck = HeldRequest(server, table.host.token, "{ me { id } }")
        await stuck.start()
        async with AsyncExitStack() as sockets:
            watchers = [
                await sockets.enter_async_context(
                    subscribed_socket(
                        server, table.host.token, protocol, GAME_UPDATES, t=table.table_id
                    )
                )
                for protocol in ("graphql-transport-ws", "graphql-ws")
            ]
            server.signal(signal.SIGTERM)
            signalled = time.monotonic()

            assert await not_ready_within(server, 0.5) == {"status": "draining"}
            # Within the window a new connection is still served, over HTTP or WebSocket.
            assert (await table.host.game(table.table_id))["version"] == view["version"]
            watchers.append(
                await sockets.enter_async_context(
                    subscribed_socket(
                        server,
                        table.host.token,
                        "graphql-transport-ws",
                        GAME_UPDATES,
                        t=table.table_id,
                    )
                )
            )
            assert time.monotonic() - signalled < DRAIN_SECONDS

            # After the window, connections are refused.
            await refused_after(server.port, DRAIN_SECONDS + 5)
            assert time.monotonic() - signalled >= DRAIN_SECONDS - 0.2

            # The request under way finishes: its bid is answered and applied.
            answer = await bid.finish()
            assert answer.status_code == 200, answer.text
            assert answer.json()["data"]["placeBid"]["version"] == view["version"] + 1

            # Every socket, of either protocol, old or new, was closed as a service restart.
            assert [await close_code(ws) for ws in watchers] == [SERVICE_RESTART] * 3

        # The request that never ends does not keep the process: it exits 0 in time (up
        # to a second more for the process itself to end after its last deadline).
        assert server.exit_code(timeout=SHUTDOWN_SECONDS + 10) == 0
        assert time.monotonic() - signalled < SHUTDOWN_SECONDS + 1.0
        wait_for(all_gone(workers), 5, f"the EXPERT pool's workers {workers} to end")
    finally:
        if stuck is not None:
            await stuck.abandon()
        server.stop()
    assert assert_log_without_gaps(server.database, table.table_id) == view["version"] + 1
