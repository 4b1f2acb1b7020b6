"""A frontend's view of the server: the gql client over HTTP and WebSocket."""

from __future__ import annotations

import asyncio
import itertools
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXAsyncTransport
from gql.transport.websockets import WebsocketsTransport

from .server import LiveServer

SIGN_UP = (
    "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) "
    "{ token player { id username } } }"
)

_names = itertools.count(1)

# httpx builds (and loads CA certificates into) a new SSL context for every client unless
# given one: about 0.1 s per call. One shared context makes a call ~15 ms.
_SSL_CONTEXT = ssl.create_default_context()

GAME_FIELDS = """
  tableId phase handNumber dealer turn viewerSeat
  hand { suit rank } handWithheld blindNilEligible legalPlays { suit rank }
  seats { seat playerId username isBot bid { kind tricks } tricksWon cardCount }
  teams { team score bags target }
  currentTrick { seat card { suit rank } }
  lastTrick { plays { seat card { suit rank } } winner }
  spadesBroken
  history { handNumber team target tricks points bags bagPenalty scoreAfter bagsAfter }
  winner version
"""

TABLE_FIELDS = """
  id name host { id username } visibility joinPolicy spectating
  seats { seat playerId username isBot }
  game { phase version viewerSeat }
"""


class ApiError(Exception):
    """A GraphQL error answer."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors[0].get("message"))
        self.errors = errors
        self.code = (errors[0].get("extensions") or {}).get("code")


class Api:
    """One signed-in (or anonymous) frontend session."""

    def __init__(self, server: LiveServer, token: str | None = None) -> None:
        self.server = server
        self.token = token
        self.player_id: str | None = None
        self.username: str | None = None

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def call(self, query: str, **variables: Any) -> dict[str, Any]:
        """Run a query or mutation over HTTP; raise ApiError on a GraphQL error."""
        transport = HTTPXAsyncTransport(
            url=self.server.http_url, headers=self._headers(), timeout=30, verify=_SSL_CONTEXT
        )
        async with Client(transport=transport) as session:
            try:
                result = await session.execute(GraphQLRequest(query, variable_values=variables))
            except TransportQueryError as exc:
                raise ApiError(list(exc.errors or [{"message": str(exc)}])) from exc
        return dict(result)

    async def error(self, query: str, **variables: Any) -> str | None:
        """The `extensions.code` of the error that `query` must answer."""
        try:
            await self.call(query, **variables)
        except ApiError as exc:
            return str(exc.code) if exc.code is not None else None
        raise AssertionError(f"expected an error from {query!r}")

    @asynccontextmanager
    async def subscribe(self, query: str, **variables: Any) -> AsyncIterator[asyncio.Queue[Any]]:
        """Subscribe over a real WebSocket; results arrive on the yielded queue."""
        transport = WebsocketsTransport(
            url=self.server.ws_url,
            init_payload={"Authorization": f"Bearer {self.token}"} if self.token else {},
        )
        queue: asyncio.Queue[Any] = asyncio.Queue()
        ready = asyncio.Event()

        async def pump() -> None:
            async with Client(transport=transport) as session:
                ready.set()
                try:
                    async for result in session.subscribe(
                        GraphQLRequest(query, variable_values=variables)
                    ):
                        await queue.put(result)
                except TransportQueryError as exc:
                    await queue.put(ApiError(list(exc.errors or [{"message": str(exc)}])))

        task = asyncio.create_task(pump())
        try:
            await asyncio.wait_for(ready.wait(), 10)
            yield queue
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    # ------------------------------------------------------------------ shortcuts

    async def sign_up(self, username: str | None = None, password: str = "password123") -> Api:
        """Create an account and use its token from now on."""
        username = username or f"player{next(_names)}"
        data = await self.call(
            SIGN_UP,
            u=username,
            p=password,
        )
        self.token = data["signUp"]["token"]
        self.player_id = data["signUp"]["player"]["id"]
        self.username = username
        return self

    async def create_table(self, **options: Any) -> dict[str, Any]:
        """createTable with the given input fields."""
        data = await self.call(
            f"mutation($i: CreateTableInput!) {{ createTable(input: $i) {{ {TABLE_FIELDS} }} }}",
            i=options,
        )
        return dict(data["createTable"])

    async def join(self, table_id: str, seat: str, code: str | None = None) -> dict[str, Any]:
        """joinTable."""
        data = await self.call(
            f"mutation($t: ID!, $s: Seat!, $c: String) {{ joinTable(tableId: $t, seat: $s, "
            f"code: $c) {{ {TABLE_FIELDS} }} }}",
            t=table_id,
            s=seat,
            c=code,
        )
        return dict(data["joinTable"])

    async def add_bot(self, table_id: str, seat: str) -> dict[str, Any]:
        """addBot."""
        data = await self.call(
            "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) "
            f"{{ {TABLE_FIELDS} }} }}",
            t=table_id,
            s=seat,
        )
        return dict(data["addBot"])

    async def game(self, table_id: str) -> dict[str, Any]:
        """The caller's view of the game."""
        data = await self.call(
            f"query($t: ID!) {{ game(tableId: $t) {{ {GAME_FIELDS} }} }}", t=table_id
        )
        return dict(data["game"])

    async def bid(
        self, table_id: str, kind: str = "TRICKS", tricks: int | None = None
    ) -> dict[str, Any]:
        """placeBid."""
        bid: dict[str, Any] = {"kind": kind}
        if tricks is not None:
            bid["tricks"] = tricks
        data = await self.call(
            "mutation($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) "
            f"{{ {GAME_FIELDS} }} }}",
            t=table_id,
            b=bid,
        )
        return dict(data["placeBid"])

    async def play(self, table_id: str, card: dict[str, str]) -> dict[str, Any]:
        """playCard."""
        data = await self.call(
            "mutation($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) "
            f"{{ {GAME_FIELDS} }} }}",
            t=table_id,
            c=card,
        )
        return dict(data["playCard"])

    async def reveal(self, table_id: str) -> dict[str, Any]:
        """revealHand."""
        data = await self.call(
            f"mutation($t: ID!) {{ revealHand(tableId: $t) {{ {GAME_FIELDS} }} }}", t=table_id
        )
        return dict(data["revealHand"])

    async def pass_cards(self, table_id: str, cards: list[dict[str, str]]) -> dict[str, Any]:
        """passCards."""
        data = await self.call(
            f"mutation($t: ID!, $c: [CardInput!]!) {{ passCards(tableId: $t, cards: $c) "
            f"{{ {GAME_FIELDS} }} }}",
            t=table_id,
            c=cards,
        )
        return dict(data["passCards"])

    async def leave(self, table_id: str) -> bool:
        """leaveTable."""
        data = await self.call("mutation($t: ID!) { leaveTable(tableId: $t) }", t=table_id)
        return bool(data["leaveTable"])


async def next_update(queue: asyncio.Queue[Any], timeout: float = 10.0) -> dict[str, Any]:
    """The next gameUpdates/lobbyUpdates payload from a subscription queue."""
    item = await asyncio.wait_for(queue.get(), timeout)
    if isinstance(item, Exception):
        raise item
    return dict(item)
