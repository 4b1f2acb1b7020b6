"""Quick play from a client's side: the operations, the ticket stream on either WebSocket
protocol, and ratings written into a test database (players with a rating history
would take many rated games to make)."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport

from .client import Api, ApiError
from .live import Updates

TABLE_FIELDS = (
    "id name host { id username } visibility joinPolicy spectating status turnSeconds "
    "replacementBot rated seats { seat playerId username isBot botLevel } game { phase }"
)
TICKET_FIELDS = f"id status rated startedAt botsAt table {{ {TABLE_FIELDS} }}"
START = f"mutation {{ startQuickPlay {{ {TICKET_FIELDS} }} }}"
START_WITH = f"mutation($i: QuickPlayInput) {{ startQuickPlay(input: $i) {{ {TICKET_FIELDS} }} }}"
CANCEL = f"mutation {{ cancelQuickPlay {{ {TICKET_FIELDS} }} }}"
LATEST = f"{{ quickPlay {{ {TICKET_FIELDS} }} }}"
SEARCHING = "{ quickPlaySearching }"
UPDATES = f"subscription {{ quickPlayUpdates {{ {TICKET_FIELDS} }} }}"
LEGACY = WebsocketsTransport.APOLLO_SUBPROTOCOL  # graphql-ws (subscriptions-transport-ws)
TRANSPORT = WebsocketsTransport.GRAPHQLWS_SUBPROTOCOL  # graphql-transport-ws
RATING_BASE, RATING_SCALE, DEFAULT_MU = 1500, 42, 25.0


async def start(api: Api, rated: bool | None = None) -> dict[str, Any]:
    """startQuickPlay (without an input when `rated` is None)."""
    if rated is None:
        return dict((await api.call(START))["startQuickPlay"])
    data = await api.call(START_WITH, i={"rated": rated})
    return dict(data["startQuickPlay"])


async def refusal(api: Api, rated: bool = False) -> str | None:
    """The code startQuickPlay is refused with, or None once it starts (or answers) a
    ticket."""
    try:
        await start(api, rated)
    except ApiError as error:
        return str(error.code)
    return None


async def cancel(api: Api) -> dict[str, Any] | None:
    """cancelQuickPlay."""
    ticket = (await api.call(CANCEL))["cancelQuickPlay"]
    return dict(ticket) if ticket is not None else None


async def latest(api: Api) -> dict[str, Any] | None:
    """quickPlay: the caller's latest ticket."""
    ticket = (await api.call(LATEST))["quickPlay"]
    return dict(ticket) if ticket is not None else None


async def searching(api: Api) -> int:
    """quickPlaySearching."""
    return int((await api.call(SEARCHING))["quickPlaySearching"])


@asynccontextmanager
async def updates(api: Api, protocol: str = LEGACY) -> AsyncIterator[Updates]:
    """A quickPlayUpdates subscription over `protocol`, open once the server has sent its
    first update or, for a player without tickets, once the socket is acknowledged."""
    transport = WebsocketsTransport(
        url=api.server.ws_url,
        init_payload={"Authorization": f"Bearer {api.token}"} if api.token else {},
        subprotocols=[protocol],
    )
    queue: asyncio.Queue[Any] = asyncio.Queue()
    ready = asyncio.Event()

    async def pump() -> None:
        async with Client(transport=transport) as session:
            ready.set()
            try:
                async for result in session.subscribe(GraphQLRequest(UPDATES)):
                    await queue.put(result)
            except TransportQueryError as exc:
                await queue.put(ApiError(list(exc.errors or [{"message": str(exc)}])))

    task = asyncio.create_task(pump())
    try:
        await asyncio.wait_for(ready.wait(), 10)
        yield Updates(queue, "quickPlayUpdates")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


async def until_status(
    api: Api, status: str, timeout: float = 10.0, poll: float = 0.2
) -> dict[str, Any]:
    """Poll quickPlay until the latest ticket has `status`; that ticket."""
    deadline = time.monotonic() + timeout
    while True:
        ticket = await latest(api)
        if ticket is not None and ticket["status"] == status:
            return ticket
        if time.monotonic() > deadline:
            raise AssertionError(f"the ticket is {ticket and ticket['status']}, not {status}")
        await asyncio.sleep(poll)


async def statuses(players: Sequence[Api]) -> list[str | None]:
    """The status of each player's latest ticket (None without one)."""
    tickets = await asyncio.gather(*(latest(p) for p in players))
    return [t["status"] if t is not None else None for t in tickets]


def humans(table: dict[str, Any]) -> list[str]:
    """The player ids of a table's humans, NORTH first."""
    return [s["playerId"] for s in table["seats"] if not s["isBot"]]


def set_ratings(database: Path, ratings: dict[str, int]) -> None:
    """Give players a shown rating by writing their rating rows (as rated games would)."""
    with sqlite3.connect(database) as connection:
        for player_id, value in ratings.items():
            mu = DEFAULT_MU + (value - RATING_BASE) / RATING_SCALE
            username_key = connection.execute(
                "SELECT username_key FROM players WHERE id = ?", (player_id,)
            ).fetchone()[0]
            connection.execute(
                "INSERT OR REPLACE INTO ratings (player_id, username_key, mu, sigma, value, "
                "deviation, games, seq, listed, board_value, board_games) "
                "VALUES (?, ?, ?, 5.0, ?, 210, 10, 0, 1, ?, -10)",
                (player_id, username_key, mu, value, -value),
            )


async def cancel_all(players: Sequence[Api]) -> None:
    """End whatever the players still search (one test's tickets stay out of the next's
    pool on a shared server)."""
    await asyncio.gather(*(cancel(p) for p in players))
