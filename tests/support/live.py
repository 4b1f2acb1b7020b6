"""Helpers for live-table tests: updates with clocks and away players, presence streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any

from .client import GAME_FIELDS, Api, ApiError

LIVE_VIEW = GAME_FIELDS + " turnDeadline seats { seat playerId isBot awayPlayer { id username } }"
LIVE_UPDATES = (
    "subscription($t: ID!, $s: Int) { gameUpdates(tableId: $t, since: $s) "
    f"{{ event seat view {{ {LIVE_VIEW} }} }} }}"
)
PRESENCE_UPDATES = (
    "subscription($t: ID!) { presenceUpdates(tableId: $t) { seat playerId connected changedAt } }"
)
PRESENCE = "query($t: ID!) { presence(tableId: $t) { seat playerId connected changedAt } }"
RECLAIM = "mutation($t: ID!) { reclaimSeat(tableId: $t) { id status seats { seat playerId } } }"
LIVE_GAME = f"query($t: ID!) {{ game(tableId: $t) {{ {LIVE_VIEW} }} }}"


def instant(text: str) -> float:
    """Epoch seconds of an ISO-8601 UTC instant the server sent."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class Updates:
    """One live subscription's results, kept in arrival order (`key`: the field)."""

    def __init__(self, queue: asyncio.Queue[Any], key: str) -> None:
        self.queue = queue
        self.key = key
        self.items: list[dict[str, Any]] = []
        self.arrived: list[float] = []

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next result (kept)."""
        item = await asyncio.wait_for(self.queue.get(), timeout)
        if isinstance(item, Exception):
            raise item
        update = dict(item[self.key])
        self.items.append(update)
        self.arrived.append(time.monotonic())
        return update

    async def until(
        self, wanted: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> dict[str, Any]:
        """Read on until a result satisfies `wanted`; that result."""
        deadline = time.monotonic() + timeout
        while True:
            update = await self.next(max(0.01, deadline - time.monotonic()))
            if wanted(update):
                return update

    async def quiet(self, seconds: float) -> list[dict[str, Any]]:
        """Whatever arrives within `seconds` (an empty list when nothing does)."""
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                got.append(await self.next(left))
            except TimeoutError:
                break
        return got

    @property
    def events(self) -> list[str]:
        """gameUpdates: the events in order."""
        return [u["event"] for u in self.items]

    @property
    def versions(self) -> list[int]:
        """gameUpdates: the versions in order."""
        return [u["view"]["version"] for u in self.items]


@asynccontextmanager
async def game_updates(api: Api, table_id: str, since: int | None = None) -> AsyncIterator[Updates]:
    """A gameUpdates subscription with the live-table fields."""
    async with api.subscribe(LIVE_UPDATES, t=table_id, s=since) as queue:
        yield Updates(queue, "gameUpdates")


@asynccontextmanager
async def hosting_bots(api: Api, **options: Any) -> AsyncIterator[tuple[str, Updates]]:
    """A new table of `api` (NORTH, `options` as for createTable) with bots added in the
    other seats once the host's gameUpdates subscription has its SNAPSHOT: the table id
    and that subscription, which sees the game start."""
    table_id = str((await api.create_table(**options))["id"])
    async with game_updates(api, table_id) as updates:
        await updates.next()
        for seat in ("EAST", "SOUTH", "WEST"):
            await api.add_bot(table_id, seat)
        yield table_id, updates


@asynccontextmanager
async def presence_updates(api: Api, table_id: str) -> AsyncIterator[Updates]:
    """A presenceUpdates subscription."""
    async with api.subscribe(PRESENCE_UPDATES, t=table_id) as queue:
        yield Updates(queue, "presenceUpdates")


async def presence(api: Api, table_id: str) -> dict[str, bool]:
    """connected by seat."""
    data = await api.call(PRESENCE, t=table_id)
    return {p["seat"]: p["connected"] for p in data["presence"]}


async def refusal_code(api: Api, query: str, **variables: Any) -> str | None:
    """The code `query` is refused with."""
    try:
        await api.call(query, **variables)
    except ApiError as exc:
        return str(exc.code) if exc.code is not None else None
    raise AssertionError(f"expected {query!r} to be refused")


def seat_of(view: dict[str, Any], seat: str) -> dict[str, Any]:
    """One seat's state in a view."""
    return next(s for s in view["seats"] if s["seat"] == seat)
