"""Shared pieces of the scale-out tests: players that pick their own moves, recorded
subscriptions, the PostgreSQL move log, and Redis stopped and started for real."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import aclosing, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
from gql import Client, GraphQLRequest
from gql.transport.exceptions import TransportQueryError
from gql.transport.websockets import WebsocketsTransport

from tests.support.client import GAME_FIELDS, Api, ApiError
from tests.support.server import LiveServer
from tests.support.services import POSTGRES_ADMIN_URL, postgres_database, redis_url

GAME_UPDATES = (
    "subscription($t: ID!, $s: Int) { gameUpdates(tableId: $t, since: $s) "
    f"{{ event seat view {{ {GAME_FIELDS} }} }} }}"
)

_MOVES = {
    "bid": "placeBid(tableId: $t, bid: $b, expectedVersion: $v)",
    "reveal": "revealHand(tableId: $t, expectedVersion: $v)",
    "pass": "passCards(tableId: $t, cards: $c, expectedVersion: $v)",
    "play": "playCard(tableId: $t, card: $c, expectedVersion: $v)",
}
_VARIABLES = {
    "bid": "$b: BidInput!, ",
    "reveal": "",
    "pass": "$c: [CardInput!]!, ",
    "play": "$c: CardInput!, ",
}
_RANK_ORDER = {
    "TWO": 0,
    "THREE": 1,
    "FOUR": 2,
    "FIVE": 3,
    "SIX": 4,
    "SEVEN": 5,
    "EIGHT": 6,
    "NINE": 7,
    "TEN": 8,
    "JACK": 9,
    "QUEEN": 10,
    "KING": 11,
    "ACE": 12,
}

Move = tuple[str, dict[str, Any]]


@dataclass
class Cluster:
    """Two server processes sharing one database and one Redis."""

    a: LiveServer
    b: LiveServer
    database_url: str


@contextmanager
def two_processes(folder: Path, env: dict[str, str] | None = None) -> Iterator[Cluster]:
    """Processes A and B on a fresh PostgreSQL database and the shared Redis (with `env`
    added to their environment); both stopped afterwards."""
    settings = {"SPADES_BROKER_URL": redis_url(), **(env or {})}
    with postgres_database() as url:
        a = LiveServer(folder / "a.db", env=settings, database_url=url)
        b = LiveServer(folder / "b.db", env=settings, database_url=url)
        a.start()
        try:
            b.start()
            try:
                yield Cluster(a, b, url)
            finally:
                b.stop()
        finally:
            a.stop()


class FastApi(Api):
    """The test client's Api, its HTTP calls made with plain httpx: the gql HTTP transport
    builds a TLS context per call (~0.1 s here), which dominates a game of many moves."""

    async def call(self, query: str, **variables: Any) -> dict[str, Any]:
        """Run a query or mutation over HTTP; raise ApiError on a GraphQL error."""
        async with httpx.AsyncClient(verify=False, timeout=30) as client:
            response = await client.post(
                self.server.http_url,
                json={"query": query, "variables": variables},
                headers=self._headers(),
            )
        try:
            body = response.json()
        except ValueError:
            raise AssertionError(f"HTTP {response.status_code}: {response.text[:300]}") from None
        if body.get("errors"):
            raise ApiError(list(body["errors"]))
        return dict(body["data"])


def on(api: Api, server: LiveServer) -> FastApi:
    """The same signed-in player, talking to another server process."""
    other = FastApi(server, api.token)
    other.player_id = api.player_id
    other.username = api.username
    return other


def choose_move(view: dict[str, Any], bid: int | None = None) -> Move:
    """A plain, legal move for the seat whose own view this is (it must be its turn):
    reveal a withheld hand, bid `bid` tricks (default: the spades held), pass the two
    lowest cards, play the first legal card.

    A team whose second bidder bids 13 is set by 130 points a hand (the second bid is the
    team's target), so the game ends after about two hands: tests use that to stay short."""
    assert view["turn"] == view["viewerSeat"], "not this seat's turn"
    phase = view["phase"]
    if phase == "BIDDING":
        if view["handWithheld"]:
            return ("reveal", {})
        if bid is None:
            bid = sum(1 for card in view["hand"] if card["suit"] == "SPADES")
        return ("bid", {"b": {"kind": "TRICKS", "tricks": bid}})
    if phase == "EXCHANGE":
        lowest = sorted(view["hand"], key=lambda c: _RANK_ORDER[c["rank"]])[:2]
        return ("pass", {"c": lowest})
    assert phase == "PLAYING", f"nothing to do in {phase}"
    return ("play", {"c": view["legalPlays"][0]})


async def send(
    api: Api, table_id: str, move: Move, expected_version: int | None = None
) -> dict[str, Any]:
    """Send one game move (optionally guarded by expectedVersion); the mover's view after."""
    kind, variables = move
    field = _MOVES[kind]
    query = f"mutation($t: ID!, {_VARIABLES[kind]}$v: Int) {{ {field} {{ {GAME_FIELDS} }} }}"
    data = await api.call(query, t=table_id, v=expected_version, **variables)
    return dict(next(iter(data.values())))


async def error_code(coroutine: Any) -> str | None:
    """The `extensions.code` an awaited call failed with (AssertionError if it succeeded)."""
    try:
        await coroutine
    except ApiError as exc:
        return str(exc.code) if exc.code is not None else None
    raise AssertionError("expected an error")


class Watch:
    """One live gameUpdates subscription, every update kept in arrival order."""

    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self.queue = queue
        self.updates: list[dict[str, Any]] = []

    @property
    def latest(self) -> dict[str, Any]:
        """The view of the last update received."""
        return dict(self.updates[-1]["view"])

    @property
    def versions(self) -> list[int]:
        """The versions received, in order."""
        return [u["view"]["version"] for u in self.updates]

    @property
    def events(self) -> list[str]:
        """The events received, in order."""
        return [u["event"] for u in self.updates]

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        """Wait for the next update and keep it."""
        item = await asyncio.wait_for(self.queue.get(), timeout)
        if isinstance(item, Exception):
            raise item
        update = dict(item["gameUpdates"])
        self.updates.append(update)
        return update

    async def until(self, version: int, timeout: float = 10.0) -> dict[str, Any]:
        """Read updates until one reports `version` (or later); its view."""
        deadline = time.monotonic() + timeout
        while not self.updates or self.latest["version"] < version:
            await self.next(max(0.01, deadline - time.monotonic()))
        return self.latest

    async def until_turn(self, seat: str, timeout: float = 10.0) -> dict[str, Any]:
        """Read updates until the game waits for `seat`, or is over; that view."""
        deadline = time.monotonic() + timeout
        while not self.updates or not (
            awaits(self.latest, seat) or self.latest["phase"] == "GAME_OVER"
        ):
            await self.next(max(0.01, deadline - time.monotonic()))
        return self.latest


def awaits(view: dict[str, Any], seat: str) -> bool:
    """The game waits for `seat` to act in this view. A move's intermediate steps can name
    a seat too: the fourth card of a trick (before TRICK_WON) already shows the leader's
    turn, and the last trick of a hand shows its winner's turn with nothing to play."""
    if view["turn"] != seat:
        return False
    if view["phase"] == "PLAYING":
        return len(view["currentTrick"]) < 4 and bool(view["legalPlays"])
    return view["phase"] in ("BIDDING", "EXCHANGE")


@asynccontextmanager
async def ws_session(api: Api) -> AsyncIterator[Any]:
    """One WebSocket connection (authenticated in connection_init) for several operations."""
    transport = WebsocketsTransport(
        url=api.server.ws_url, init_payload={"Authorization": f"Bearer {api.token}"}
    )
    async with Client(transport=transport) as session:
        yield session


async def first_update(session: Any, table_id: str, since: int | None = None) -> dict[str, Any]:
    """Subscribe on an open WebSocket session; the first update (ApiError on an error)."""
    request = GraphQLRequest(GAME_UPDATES, variable_values={"t": table_id, "s": since})
    try:
        async with aclosing(session.subscribe(request)) as results:
            async for result in results:
                return dict(result["gameUpdates"])
    except TransportQueryError as exc:
        raise ApiError(list(exc.errors or [{"message": str(exc)}])) from exc
    raise AssertionError("the subscription ended without an update")


@asynccontextmanager
async def watching(api: Api, table_id: str, since: int | None = None) -> AsyncIterator[Watch]:
    """Subscribe to a table's game updates (with `since`, to catch up)."""
    async with api.subscribe(GAME_UPDATES, t=table_id, s=since) as queue:
        yield Watch(queue)


async def take_turn(
    api: Api,
    table_id: str,
    watch: Watch,
    seat: str,
    bid: int | None = None,
    timeout: float = 15.0,
) -> dict[str, Any] | None:
    """Wait for `seat`'s turn on `watch` (this player's own subscription) and make its
    move, guarded by the version it was decided on; the view after it (once `watch` has
    shown it), or None once the game is over."""
    deadline = time.monotonic() + timeout
    while True:
        view = await watch.until_turn(seat, timeout=max(0.01, deadline - time.monotonic()))
        if view["phase"] == "GAME_OVER":
            return None
        try:
            after = await send(api, table_id, choose_move(view, bid), view["version"])
        except ApiError as exc:
            if exc.code != "CONFLICT":
                raise
            # The subscription was behind: read on.
            await watch.next(max(0.01, deadline - time.monotonic()))
            continue
        # Until the subscription shows the move, its last view still says it is our turn.
        await watch.until(after["version"], max(0.01, deadline - time.monotonic()))
        return after


async def play_turns_until_over(
    api: Api,
    table_id: str,
    watch: Watch,
    seat: str,
    bid: int | None = None,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """Play `seat`'s turns until the game is over; the final view."""
    deadline = time.monotonic() + timeout
    while await take_turn(api, table_id, watch, seat, bid, max(0.01, deadline - time.monotonic())):
        pass
    return watch.latest


def assert_consecutive(watch: Watch) -> None:
    """The subscription's versions go up by exactly one each time (a SNAPSHOT may jump
    forward), with no duplicate."""
    versions = watch.versions
    for (before, after), update in zip(
        itertools.pairwise(versions), watch.updates[1:], strict=True
    ):
        if update["event"] == "SNAPSHOT":
            assert after > before, f"snapshot went back: {before} -> {after}"
        else:
            assert after == before + 1, f"{before} -> {after} ({update['event']})"


# ------------------------------------------------------------------ PostgreSQL


def plain_url(database_url: str) -> str:
    """asyncpg's URL for a SQLAlchemy `postgresql+asyncpg://` one."""
    return database_url.replace("postgresql+asyncpg://", "postgresql://")


async def move_log(database_url: str, table_id: str) -> tuple[list[tuple[int, int]], int]:
    """The (seq, changes) rows of a table's move log by insertion order, and its version."""
    connection = await asyncpg.connect(plain_url(database_url))
    try:
        # One snapshot for both reads: bots may be moving meanwhile.
        async with connection.transaction(isolation="repeatable_read", readonly=True):
            rows = await connection.fetch(
                "SELECT seq, changes FROM moves WHERE table_id = $1 ORDER BY id", table_id
            )
            version = await connection.fetchval(
                "SELECT version FROM tables WHERE id = $1", table_id
            )
    finally:
        await connection.close()
    return [(r["seq"], r["changes"]) for r in rows], int(version)


async def logged_moves(database_url: str, table_id: str) -> list[dict[str, Any]]:
    """The move-log entries of a table (their JSON), by insertion order."""
    connection = await asyncpg.connect(plain_url(database_url))
    try:
        rows = await connection.fetch(
            "SELECT move FROM moves WHERE table_id = $1 ORDER BY id", table_id
        )
    finally:
        await connection.close()
    return [json.loads(r["move"]) for r in rows]


def assert_log_complete(rows: list[tuple[int, int]], version: int) -> None:
    """The log starts at version 1, each row starts where the last one ended (no gap, no
    duplicate, in insertion order) and the last one ends at the table's version."""
    assert rows, "empty move log"
    assert rows[0][0] == 1
    for (seq, changes), (next_seq, _) in itertools.pairwise(rows):
        assert changes >= 1
        assert next_seq == seq + changes, f"row {seq}+{changes} followed by {next_seq}"
    last_seq, last_changes = rows[-1]
    assert last_seq + last_changes - 1 == version


# ------------------------------------------------------------------ Redis and health


async def health(server: LiveServer) -> tuple[int, dict[str, Any]]:
    """The status code and JSON body of /healthz."""
    async with httpx.AsyncClient(verify=False, timeout=10) as client:
        response = await client.get(f"http://127.0.0.1:{server.port}/healthz")
    return response.status_code, dict(response.json())


async def wait_for_health(server: LiveServer, status: int, timeout: float = 10.0) -> dict[str, Any]:
    """Poll /healthz until it answers `status`; its body."""
    deadline = time.monotonic() + timeout
    while True:
        code, body = await health(server)
        if code == status:
            return body
        if time.monotonic() > deadline:
            raise AssertionError(f"/healthz still {code} {body}, wanted {status}")
        await asyncio.sleep(0.1)


@asynccontextmanager
async def database_outage(database_url: str) -> AsyncIterator[None]:
    """The test database refuses connections (and loses the open ones) for the duration."""
    name = database_url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(POSTGRES_ADMIN_URL)
    try:
        await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS false')
        try:
            await admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = $1 AND pid <> pg_backend_pid()",
                name,
            )
            yield
        finally:
            await admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS true')
    finally:
        await admin.close()
