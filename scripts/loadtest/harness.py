"""The client harness: players and spectators over HTTP (httpx) and WebSockets
(`graphql-transport-ws`), one table slot per table, and the drivers that make its moves.

A move's latency runs from the start of its HTTP request to the moment every watcher of
the table (its 4 players, and its spectators if any) has an update whose `version` is at
least the version the mutation answered."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import random
import sys
import time
import types
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.typing import Subprotocol

from .measure import Stats

SEATS = ("NORTH", "EAST", "SOUTH", "WEST")
PASSWORD = "loadtest-password"

SIGN_UP = "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }"
CREATE_TABLE = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
JOIN_TABLE = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
WATCH_TABLE = "mutation($t: ID!) { watchTable(tableId: $t) { id } }"
PLACE_BID = (
    "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) { version } }"
)
PLAY_CARD = "mutation($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) { version } }"
REVEAL_HAND = "mutation($t: ID!) { revealHand(tableId: $t) { version } }"
GAME_UPDATES = (
    "subscription($t: ID!) { gameUpdates(tableId: $t) { event view { version turn phase "
    "handNumber handWithheld legalPlays { suit rank } } } }"
)
LOBBY_UPDATES = "subscription { lobbyUpdates { event tableId } }"
LOBBY_ID = "lobby"

HTTP_TIMEOUT = 15.0
LONGEST_TURN_SECONDS = 300  # docs/rules.md: 5..300 on a public table
WS_STEP_TIMEOUT = 30.0
SETUP_TIMEOUT_PER_TABLE = 180.0  # a crowded shared machine can be 5-10x slow

T = TypeVar("T")


def stub_sniffio() -> None:
    """httpcore asks `sniffio` for the running async library several times per request;
    without sniffio installed each ask is a failed import that searches sys.path (a large
    share of this client's CPU). A stub answering "asyncio" (uvloop included) avoids it."""
    try:
        import sniffio  # noqa: F401
    except ImportError:
        stub = types.ModuleType("sniffio")
        stub.current_async_library = lambda: "asyncio"  # type: ignore[attr-defined]
        sys.modules["sniffio"] = stub


class ApiError(Exception):
    """A refused or failed HTTP GraphQL call; `code` names it for the error counts."""

    def __init__(self, code: str, message: str = "") -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


class Api:
    """GraphQL over HTTP through one small connection pool (one per table)."""

    def __init__(self, url: str, pool: int) -> None:
        self.url = url
        self.client = httpx.AsyncClient(
            # Drop idle connections before uvicorn does (5 s): reusing one the server is
            # closing at that moment fails with a ReadError.
            limits=httpx.Limits(
                max_connections=pool, max_keepalive_connections=pool, keepalive_expiry=2.0
            ),
            timeout=httpx.Timeout(HTTP_TIMEOUT),
            trust_env=False,
        )

    async def call(self, query: str, variables: dict[str, Any], token: str | None = None) -> Any:
        """The `data` of a query or mutation; ApiError on any error."""
        headers = {"Authorization": f"Bearer {token}"} if token else None
        try:
            response = await self.client.post(
                self.url, json={"query": query, "variables": variables}, headers=headers
            )
        except httpx.TimeoutException as exc:
            raise ApiError("HTTP timeout") from exc
        except httpx.HTTPError as exc:
            raise ApiError(f"HTTP {type(exc).__name__}") from exc
        try:
            body = response.json()
        except ValueError as exc:
            raise ApiError(f"HTTP {response.status_code} (not JSON)") from exc
        errors = body.get("errors") if isinstance(body, dict) else None
        if errors:
            first = errors[0]
            code = (first.get("extensions") or {}).get("code") or "GRAPHQL_ERROR"
            raise ApiError(str(code), str(first.get("message", "")))
        if response.status_code != 200 or not isinstance(body, dict) or "data" not in body:
            raise ApiError(f"HTTP {response.status_code}")
        return body["data"]

    async def close(self) -> None:
        """Close the pool."""
        await self.client.aclose()


class SeatClient:
    """One watcher of a table (a player at index 0-3, a spectator from 4 on): its token,
    its WebSocket, its subscription and its latest view."""

    def __init__(self, slot: TableSlot, index: int, token: str) -> None:
        self.slot = slot
        self.index = index
        self.token = token
        self.ws: ClientConnection | None = None
        self.reader: asyncio.Task[None] | None = None
        self.subscription_id = ""
        self.subscriptions = 0
        self.version: int | None = None
        self.view: dict[str, Any] = {}
        self.snapshot = asyncio.Event()
        self.acked = asyncio.Event()
        self.closing = False

    async def open(self, ws_url: str) -> None:
        """Connect, init with the token, wait for the ack."""
        self.ws = await connect(
            ws_url,
            subprotocols=[Subprotocol("graphql-transport-ws")],
            compression=None,
            proxy=None,
            open_timeout=WS_STEP_TIMEOUT,
            ping_interval=None,  # uvicorn pings; the library answers them
            close_timeout=2,
            max_queue=256,
        )
        self.reader = asyncio.create_task(self._read())
        payload = {"Authorization": f"Bearer {self.token}"}
        await self.ws.send(json.dumps({"type": "connection_init", "payload": payload}))
        await asyncio.wait_for(self.acked.wait(), WS_STEP_TIMEOUT)

    async def subscribe_lobby(self) -> None:
        """Also subscribe to `lobbyUpdates` on the same socket (its updates are counted)."""
        assert self.ws is not None
        message = {"type": "subscribe", "id": LOBBY_ID, "payload": {"query": LOBBY_UPDATES}}
        await self.ws.send(json.dumps(message))

    async def subscribe(self, table_id: str) -> None:
        """Subscribe to `table_id` (ending the previous subscription), wait for the SNAPSHOT."""
        assert self.ws is not None
        if self.subscription_id:
            with contextlib.suppress(ConnectionClosed):
                await self.ws.send(json.dumps({"type": "complete", "id": self.subscription_id}))
        self.subscriptions += 1
        self.subscription_id = str(self.subscriptions)
        self.version = None
        self.view = {}
        self.snapshot.clear()
        message = {
            "type": "subscribe",
            "id": self.subscription_id,
            "payload": {"query": GAME_UPDATES, "variables": {"t": table_id}},
        }
        await self.ws.send(json.dumps(message))
        await asyncio.wait_for(self.snapshot.wait(), WS_STEP_TIMEOUT)

    async def _read(self) -> None:
        assert self.ws is not None
        stats = self.slot.stats
        try:
            async for raw in self.ws:
                now = time.perf_counter()
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "next":
                    if message.get("id") == LOBBY_ID:
                        if stats.recording:
                            stats.lobby_updates += 1
                        continue
                    if message.get("id") != self.subscription_id:
                        continue  # a late update of a subscription already ended
                    payload = message.get("payload") or {}
                    data = payload.get("data")
                    if payload.get("errors") or not data:
                        stats.error("subscription error")
                        continue
                    self._update(data["gameUpdates"], now)
                elif kind == "connection_ack":
                    self.acked.set()
                elif kind == "ping":
                    await self.ws.send('{"type":"pong"}')
                elif kind == "error":
                    stats.error("subscription error")
                elif kind == "complete" and message.get("id") == self.subscription_id:
                    stats.error("subscription completed by server")
        except ConnectionClosed:
            if not self.closing:
                stats.error("websocket closed by server")
        except (WebSocketException, ValueError, KeyError, TypeError):
            if not self.closing:
                stats.error("websocket protocol error")

    def _update(self, update: dict[str, Any], now: float) -> None:
        view = update["view"]
        version = view["version"]
        stats = self.slot.stats
        if stats.recording:
            stats.updates_received += 1
        if (
            self.version is not None
            and update["event"] != "SNAPSHOT"
            and version != self.version + 1
        ):
            stats.error("version gap in updates")
            stats.gaps += 1
        self.version = version
        self.view = view
        self.snapshot.set()
        self.slot.seat_updated(self.index, version, now)

    async def close(self) -> None:
        """Close the socket (bounded by the library's close timeout)."""
        self.closing = True
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)


# --------------------------------------------------------------------------- one table


class TableSlot:
    """One table slot: four players (and `spectators` watchers), the current table, and
    the in-flight move.

    `apis[seat]` and `ws_urls[seat]` are the server process each seat talks to (all the
    same with one process; spread over the processes with several); spectator k talks to
    seat k mod 4's process. With `lobby`, every player's socket also subscribes to
    `lobbyUpdates`."""

    def __init__(
        self,
        index: int,
        apis: list[Api],
        ws_urls: list[str],
        stats: Stats,
        run_id: str,
        seed: int | None,
        spectators: int = 0,
        lobby: bool = False,
    ) -> None:
        self.index = index
        self.apis = apis
        self.ws_urls = ws_urls
        self.stats = stats
        self.run_id = run_id
        self.seed = seed
        self.slow_clock = True  # until the server refuses turnSeconds
        self.games = 0
        self.table_id = ""
        self.spectator_count = spectators
        self.lobby = lobby
        self.seats: list[SeatClient] = []
        self.spectators: list[SeatClient] = []
        # The move in flight: arrival times of updates per watcher, until its version is
        # known.
        self.in_flight = False
        self.target: int | None = None
        self.early: list[list[tuple[int, float]]] = []
        self.reached: list[float | None] = []
        self.missing = 0
        self.done = asyncio.Event()

    @property
    def watchers(self) -> list[SeatClient]:
        """Everyone who must see a move: the players, then the spectators."""
        return self.seats + self.spectators

    # ---------------------------------------------------------------- setup

    async def sign_up(self) -> None:
        """Four new accounts, and one per spectator (at most 16 sign-ups at a time)."""
        count = 4 + self.spectator_count
        names = [f"lt{self.run_id}{self.index}x{n}" for n in range(count)]
        semaphore = asyncio.Semaphore(16)

        async def one(n: int) -> Any:
            async with semaphore:
                return await self.apis[n % 4].call(SIGN_UP, {"u": names[n], "p": PASSWORD})

        results = await asyncio.gather(*(one(n) for n in range(count)))
        clients = [SeatClient(self, n, data["signUp"]["token"]) for n, data in enumerate(results)]
        self.seats, self.spectators = clients[:4], clients[4:]

    async def new_table(self) -> None:
        """The NORTH player creates a table, the other three join it (the game starts)."""
        # The longest turn clock a public table may have: a long setup (thousands of
        # sockets) must not let clocks run out and bots take seats before the measurement
        # (a build without clocks refuses the field: then without it).
        options: dict[str, Any] = {"name": f"loadtest {self.index}"}
        if self.slow_clock:
            options["turnSeconds"] = LONGEST_TURN_SECONDS
        if self.seed is not None:
            options["seed"] = self.seed * 1000 + self.games
        while True:
            try:
                data = await self.apis[0].call(CREATE_TABLE, {"i": options}, self.seats[0].token)
                break
            except ApiError as exc:
                if exc.code == "FORBIDDEN" and "seed" in options:
                    self.seed = None  # a server without seeded tables: deal at random
                    options.pop("seed")
                elif "turnSeconds" in options and "turnSeconds" in str(exc):
                    self.slow_clock = False
                    options.pop("turnSeconds")
                else:
                    raise
        self.table_id = data["createTable"]["id"]
        for seat in range(1, 4):
            await self.apis[seat].call(
                JOIN_TABLE, {"t": self.table_id, "s": SEATS[seat]}, self.seats[seat].token
            )
        await bounded_gather(
            [
                functools.partial(
                    self.apis[s.index % 4].call, WATCH_TABLE, {"t": self.table_id}, s.token
                )
                for s in self.spectators
            ],
            16,
            "spectators watching",
            quiet=True,
        )
        self.games += 1

    async def connect(self) -> None:
        """One socket per watcher (each to its seat's server process), each subscribed to
        the table (players' sockets to the lobby too, with `lobby`)."""
        for seat in self.seats:
            await seat.open(self.ws_urls[seat.index])
            await seat.subscribe(self.table_id)
            if self.lobby:
                await seat.subscribe_lobby()

        async def spectate(spectator: SeatClient) -> None:
            await spectator.open(self.ws_urls[spectator.index % 4])
            await spectator.subscribe(self.table_id)

        await bounded_gather(
            [functools.partial(spectate, s) for s in self.spectators], 16, "spectators", True
        )

    async def spread(self, moves: int) -> None:
        """Play `moves` moves at once (unmeasured), so that this table is somewhere else in
        its hand than the others when the measurement starts."""
        for _ in range(moves):
            if not await self.step():
                errors = ", ".join(f"{k}: {n}" for k, n in self.stats.errors.items())
                raise RuntimeError(f"table {self.index}: a move failed while spreading ({errors})")

    async def replace_table(self) -> None:
        """After GAME_OVER: a new table for the same four players, same sockets."""
        await self.new_table()
        await asyncio.gather(*(watcher.subscribe(self.table_id) for watcher in self.watchers))

    async def close(self) -> None:
        """Close every watcher's socket."""
        await asyncio.gather(*(w.close() for w in self.watchers), return_exceptions=True)

    # ---------------------------------------------------------------- measurement

    def seat_updated(self, seat: int, version: int, now: float) -> None:
        """Called by a seat's reader for every update it receives."""
        if not self.in_flight or self.reached[seat] is not None:
            return
        if self.target is None:
            self.early[seat].append((version, now))
        elif version >= self.target:
            self.reached[seat] = now
            self.missing -= 1
            if self.missing == 0:
                self.done.set()

    def _begin(self) -> None:
        watchers = 4 + len(self.spectators)
        self.in_flight = True
        self.target = None
        self.early = [[] for _ in range(watchers)]
        self.reached = [None] * watchers
        self.missing = watchers
        self.done.clear()

    def _expect(self, version: int) -> None:
        """The move's version is known: settle the updates that arrived before it."""
        for seat, early in enumerate(self.early):
            first = next((t for v, t in early if v >= version), None)
            if first is not None:
                self.reached[seat] = first
                self.missing -= 1
        self.target = version
        if self.missing == 0:
            self.done.set()

    def _choose(self) -> tuple[str, dict[str, Any], SeatClient, str] | None:
        """(query, variables, actor, kind) of the next move, or None with the reason counted."""
        latest = max(self.seats, key=lambda s: s.version if s.version is not None else -1).view
        phase, turn = latest.get("phase"), latest.get("turn")
        if turn is None or turn not in SEATS:
            self.stats.error(f"no turn in phase {phase}")
            return None
        actor = self.seats[SEATS.index(turn)]
        if actor.view.get("version") != latest.get("version"):
            self.stats.error("actor's view is stale")
            return None
        if phase == "BIDDING":
            if actor.view.get("handWithheld"):
                return REVEAL_HAND, {"t": self.table_id}, actor, "revealHand"
            return PLACE_BID, {"t": self.table_id}, actor, "placeBid"
        if phase == "PLAYING":
            plays = actor.view.get("legalPlays") or []
            if not plays:
                self.stats.error("no legal play on own turn")
                return None
            return PLAY_CARD, {"t": self.table_id, "c": plays[0]}, actor, "playCard"
        self.stats.error(f"unexpected phase {phase}")
        return None

    async def step(self) -> bool:
        """One move: choose, send, wait for every watcher. False if it failed."""
        if any(seat.view.get("phase") == "GAME_OVER" for seat in self.seats):
            try:
                await asyncio.wait_for(self.replace_table(), SETUP_TIMEOUT_PER_TABLE)
            except (ApiError, TimeoutError, OSError, WebSocketException) as exc:
                self.stats.error(f"new table after game over: {type(exc).__name__}")
                return False
            if self.stats.recording:
                self.stats.games_finished += 1
            return True
        choice = self._choose()
        if choice is None:
            return False
        query, variables, actor, kind = choice
        recording = self.stats.recording
        self._begin()
        started = time.perf_counter()
        try:
            data = await self.apis[actor.index].call(query, variables, actor.token)
            answered = time.perf_counter()
            self._expect(int(data[kind]["version"]))
            await asyncio.wait_for(self.done.wait(), WS_STEP_TIMEOUT)
        except ApiError as exc:
            self.stats.error(f"{kind}: {exc.code}")
            return False
        except TimeoutError:
            self.stats.error("timeout waiting for the table's subscribers")
            return False
        finally:
            self.in_flight = False
        if recording:
            finished = max(t for t in self.reached if t is not None)
            self.stats.latencies.append(finished - started)
            self.stats.http_latencies.append(answered - started)
            self.stats.starts.append(started)
        return True


# --------------------------------------------------------------------------- drivers


async def drive_rate(slot: TableSlot, period: float, start: float, end: float) -> None:
    """Move once per `period` (at a random phase) until `end`; never bursts to catch up."""
    next_at = start + random.random() * period
    for _ in range(int((end - start) / period) + 2):
        if next_at >= end:
            return
        delay = next_at - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        await slot.step()
        next_at += period
        now = time.perf_counter()
        if next_at < now:
            if slot.stats.recording:
                slot.stats.late_ticks += 1
            next_at = now


async def drive_saturate(slot: TableSlot, end: float, max_steps: int) -> None:
    """Move again as soon as all four saw the previous move, until `end`."""
    for _ in range(max_steps):
        if time.perf_counter() >= end:
            return
        if not await slot.step():
            await asyncio.sleep(0.05)  # an error: do not spin


async def bounded_gather(
    factories: list[Callable[[], Awaitable[T]]],
    concurrency: int,
    label: str,
    quiet: bool,
    timeout: float = SETUP_TIMEOUT_PER_TABLE,
) -> list[T]:
    """Run coroutines with at most `concurrency` at a time, each within `timeout`; the
    first failure propagates."""
    semaphore = asyncio.Semaphore(concurrency)
    finished = 0
    started = time.perf_counter()

    async def one(factory: Callable[[], Awaitable[T]]) -> T:
        nonlocal finished
        async with semaphore:
            result = await asyncio.wait_for(factory(), timeout)
        finished += 1
        if not quiet and (finished % 100 == 0 or finished == len(factories)):
            elapsed = time.perf_counter() - started
            print(f"  {label}: {finished}/{len(factories)} ({elapsed:.1f} s)", file=sys.stderr)
        return result

    tasks = [asyncio.create_task(one(f)) for f in factories]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:  # the first failure ends the whole step, quietly
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def ws_url_of(http_url: str) -> str:
    """ws://host:port/path of an http://host:port/path URL."""
    parts = urlsplit(http_url)
    return urlunsplit(("wss" if parts.scheme == "https" else "ws", *parts[1:]))
