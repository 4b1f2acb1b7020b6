"""Server-level scenarios built on the frontend client: a fast client, seated tables, and
helpers that drive a game through the API (used by tests/server)."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import ssl
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from .client import GAME_FIELDS, Api, ApiError
from .server import LiveServer

SEATS = ("NORTH", "EAST", "SOUTH", "WEST")

# httpx builds (and loads certificates into) a new SSL context for every client it makes,
# about 50 ms each; one shared context makes a request cost a few milliseconds.
_SSL = ssl.create_default_context()

GAME_UPDATES = (
    "subscription($t: ID!, $s: Int) { gameUpdates(tableId: $t, since: $s) "
    f"{{ event seat view {{ {GAME_FIELDS} }} }} }}"
)

# Bare documents (small selections) for refusals and races; `$v` is `expectedVersion`.
PLACE_BID = (
    "mutation($t: ID!, $b: BidInput!, $v: Int) "
    "{ placeBid(tableId: $t, bid: $b, expectedVersion: $v) { version } }"
)
PLAY_CARD = (
    "mutation($t: ID!, $c: CardInput!, $v: Int) "
    "{ playCard(tableId: $t, card: $c, expectedVersion: $v) { version } }"
)
REVEAL_HAND = (
    "mutation($t: ID!, $v: Int) { revealHand(tableId: $t, expectedVersion: $v) { version } }"
)
PASS_CARDS = (
    "mutation($t: ID!, $c: [CardInput!]!, $v: Int) "
    "{ passCards(tableId: $t, cards: $c, expectedVersion: $v) { version } }"
)
JOIN_TABLE = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
ADD_BOT = "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }"
LEAVE_TABLE = "mutation($t: ID!) { leaveTable(tableId: $t) }"
GAME = "query($t: ID!) { game(tableId: $t) { version } }"
TABLE = "query($t: ID!) { table(id: $t) { id } }"
GAME_RECORD = "query($t: ID!) { gameRecord(tableId: $t) }"
CREATE_TABLE = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
SIGN_IN = (
    "mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) "
    "{ token player { id username } } }"
)


class FastApi(Api):
    """The frontend client, with a shortcut for expected refusals."""

    async def refusal(self, query: str, **variables: Any) -> ApiError:
        """The error `query` must answer (the whole error, message included)."""
        try:
            await self.call(query, **variables)
        except ApiError as exc:
            return exc
        raise AssertionError(f"expected an error from {query!r}")


async def post_raw(
    server: LiveServer, body: Any, token: str | None = None, *, content: bytes | None = None
) -> httpx.Response:
    """A raw POST /graphql (a JSON body, or raw bytes), to look at the whole answer."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(verify=_SSL, timeout=60) as client:
        if content is not None:
            headers["content-type"] = "application/json"
            return await client.post(server.http_url, content=content, headers=headers)
        return await client.post(server.http_url, json=body, headers=headers)


@dataclass
class SeatedTable:
    """A table whose four seats are taken by signed-up humans (the game has started)."""

    table_id: str
    players: dict[str, FastApi]  # by seat

    @property
    def host(self) -> FastApi:
        """The creator (NORTH)."""
        return self.players["NORTH"]

    async def views(self) -> dict[str, dict[str, Any]]:
        """Every seat's own view of the game."""
        views = await asyncio.gather(*(p.game(self.table_id) for p in self.players.values()))
        return dict(zip(self.players, views, strict=True))

    async def view(self) -> dict[str, Any]:
        """The host's view."""
        return await self.host.game(self.table_id)

    async def on_turn(self) -> FastApi:
        """The player whose turn it is."""
        turn = (await self.view())["turn"]
        assert turn is not None, "nobody is to act"
        return self.players[turn]

    async def bid_round(self, bids: Mapping[str, tuple[str, int | None]]) -> dict[str, Any]:
        """Each seat bids its bid from `bids` when its turn comes, until all four bid."""
        view = await self.view()
        for _ in range(4):
            seat = view["turn"]
            kind, tricks = bids[seat]
            view = await self.players[seat].bid(self.table_id, kind, tricks)
        return view

    async def play_legal(self, count: int) -> dict[str, Any]:
        """The seat on turn plays its first legal card, `count` times; the last view."""
        view = await self.view()
        for _ in range(count):
            player = self.players[view["turn"]]
            own = await player.game(self.table_id)
            view = await player.play(self.table_id, own["legalPlays"][0])
        return view


async def signed_up(server: LiveServer, count: int) -> list[FastApi]:
    """`count` new signed-up players."""
    return list(await asyncio.gather(*(FastApi(server).sign_up() for _ in range(count))))


async def seat_four_humans(server: LiveServer, seed: int | None = 7, **options: Any) -> SeatedTable:
    """A table (seeded deal) whose four seats are filled by humans, so the game started."""
    north, east, south, west = await signed_up(server, 4)
    if seed is not None:
        options["seed"] = seed
    table = await north.create_table(**options)
    for seat, player in (("EAST", east), ("SOUTH", south), ("WEST", west)):
        await player.join(table["id"], seat)
    return SeatedTable(table["id"], {"NORTH": north, "EAST": east, "SOUTH": south, "WEST": west})


def move_log(database: Path, table_id: str) -> tuple[list[tuple[int, int]], int]:
    """(seq, changes) of a table's stored move log in seq order, and the table's version,
    read straight from the SQLite file."""
    connection = sqlite3.connect(database)
    try:
        rows = connection.execute(
            "SELECT seq, changes FROM moves WHERE table_id = ? ORDER BY seq", (table_id,)
        ).fetchall()
        (version,) = connection.execute(
            "SELECT version FROM tables WHERE id = ?", (table_id,)
        ).fetchone()
    finally:
        connection.close()
    return [(int(s), int(c)) for s, c in rows], int(version)


def assert_log_without_gaps(database: Path, table_id: str) -> int:
    """The move log covers versions 1..version exactly once; returns the version."""
    rows, version = move_log(database, table_id)
    assert rows, "no move was logged"
    assert rows[0][0] == 1, rows[:3]
    for (seq, changes), (next_seq, _) in itertools.pairwise(rows):
        assert changes >= 1, (seq, changes)
        assert next_seq == seq + changes, f"gap or overlap after seq {seq}: {rows}"
    last_seq, last_changes = rows[-1]
    assert last_seq + last_changes - 1 == version, (rows[-3:], version)
    return version


async def first_event(
    server: LiveServer,
    query: str,
    *,
    init_payload: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
    **variables: Any,
) -> dict[str, Any] | ApiError:
    """Open a WebSocket (auth by `init_payload` and/or upgrade `headers`), subscribe, and
    return the first result, or the ApiError the subscription answered."""
    transport = WebsocketsTransport(
        url=server.ws_url, init_payload=init_payload or {}, headers=headers
    )
    async with Client(transport=transport) as session:
        updates = session.subscribe(GraphQLRequest(query, variable_values=variables))
        try:
            return dict(await asyncio.wait_for(anext(updates), timeout))
        except TransportQueryError as exc:
            return ApiError(list(exc.errors or [{"message": str(exc)}]))
        finally:
            await updates.aclose()


async def ws_answers(
    server: LiveServer, token: str | None, messages: list[str | bytes], replies: int = 1
) -> tuple[list[dict[str, Any]], int | None]:
    """Speak graphql-transport-ws by hand: connection_init (with the token), then
    `messages`; returns the replies after the ack (up to `replies` of them) and the close
    code if the server closed the socket."""
    init = {"Authorization": f"Bearer {token}"} if token else {}
    answers: list[dict[str, Any]] = []
    async with connect(server.ws_url, subprotocols=[Subprotocol("graphql-transport-ws")]) as ws:
        await ws.send(json.dumps({"type": "connection_init", "payload": init}))
        ack = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert ack["type"] == "connection_ack", ack
        for message in messages:
            await ws.send(message)
        try:
            while len(answers) < replies:
                answers.append(json.loads(await asyncio.wait_for(ws.recv(), 10)))
        except ConnectionClosed as closed:
            return answers, closed.rcvd.code if closed.rcvd is not None else None
    return answers, None
