"""A rolling restart under live load, for its test (test_rolling_restart.py) and its
benchmark (scripts/rolling_restart.py): what a load balancer does for the clients (each
new connection goes to a process whose /readyz answers 200), tables of two humans who
move over HTTP and two bots, spectators that resubscribe with `since` whenever their
socket closes, each server process drained and started again in turn, and the audit of
the acknowledged moves against the move log.

The figures: a move is *acknowledged* when its mutation was answered with data; *applied*
counts the human moves in the move log; an acknowledged move is *lost* when the log has
no such move ending at the version its answer gave; a logged move that no answer
acknowledged is counted *doubled* (applied twice, or applied while its sender was told
nothing). A *gap* is an update a follower received out of sequence (a version skipped),
a *repeat* one it had already received."""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import statistics
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack, suppress
from dataclasses import dataclass, field
from typing import Any

import asyncpg  # type: ignore[import-untyped]
import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Subprotocol

from tests.support.client import SIGN_UP
from tests.support.server import LiveServer

from .harness import GAME_UPDATES, choose_move, plain_url

HUMANS = ("NORTH", "SOUTH")
BOTS = ("EAST", "WEST")
MOVE_TYPES = frozenset({"bid", "play", "pass", "reveal"})
_MOVES = {
    "bid": ("placeBid", "$b: BidInput!, ", "bid: $b, "),
    "reveal": ("revealHand", "", ""),
    "pass": ("passCards", "$c: [CardInput!]!, ", "cards: $c, "),
    "play": ("playCard", "$c: CardInput!, ", "card: $c, "),
}
OWN_VIEW = (
    "query($t: ID!) { game(tableId: $t) { phase turn viewerSeat version handWithheld "
    "hand { suit rank } legalPlays { suit rank } currentTrick { seat } } }"
)
_names = itertools.count(1)


class Balancer:
    """The load balancer in front of the processes, as the clients see it: a new
    connection goes to a process whose /readyz answered 200 at the last poll (round
    robin); a request whose connection is refused or dropped is sent to another."""

    def __init__(self, servers: Sequence[LiveServer], poll_seconds: float = 0.2) -> None:
        self.servers = list(servers)
        self.poll_seconds = poll_seconds
        self.ready: dict[int, bool] = {server.port: False for server in self.servers}
        self.retried = 0  # requests sent again after a refused or dropped connection
        self._turn = itertools.count()
        self._stack = AsyncExitStack()
        self._clients: dict[int, httpx.AsyncClient] = {}
        self._poller: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Balancer:
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=50)
        for server in self.servers:
            self._clients[server.port] = await self._stack.enter_async_context(
                httpx.AsyncClient(timeout=60, limits=limits)
            )
        await self._poll_once()
        self._poller = asyncio.create_task(self._poll_forever())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._poller is not None:
            self._poller.cancel()
            await asyncio.gather(self._poller, return_exceptions=True)
        await self._stack.aclose()

    async def _poll_once(self) -> None:
        async def check(server: LiveServer) -> None:
            try:
                response = await self._clients[server.port].get(
                    f"http://127.0.0.1:{server.port}/readyz", timeout=2
                )
                self.ready[server.port] = response.status_code == 200
            except httpx.HTTPError:
                self.ready[server.port] = False

        await asyncio.gather(*(check(server) for server in self.servers))

    async def _poll_forever(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            await self._poll_once()

    async def pick(self, timeout: float = 60.0) -> LiveServer:
        """A ready process (waiting for one if none is)."""
        deadline = time.monotonic() + timeout
        while True:
            ready = [s for s in self.servers if self.ready[s.port]]
            if ready:
                return ready[next(self._turn) % len(ready)]
            if time.monotonic() > deadline:
                raise AssertionError("no process ready")
            await asyncio.sleep(0.02)

    async def until_ready(self, server: LiveServer, timeout: float = 60.0) -> None:
        """Wait until the balancer sends new connections to `server`."""
        deadline = time.monotonic() + timeout
        while not self.ready[server.port]:
            assert time.monotonic() < deadline, f"process on {server.port} never ready"
            await asyncio.sleep(0.05)

    async def post(self, token: str | None, query: str, **variables: Any) -> dict[str, Any]:
        """One GraphQL operation over HTTP on a ready process; its whole JSON answer."""
        headers = {"authorization": f"Bearer {token}"} if token else {}
        while True:
            server = await self.pick()
            try:
                response = await self._clients[server.port].post(
                    server.http_url,
                    json={"query": query, "variables": variables},
                    headers=headers,
                )
            except httpx.TransportError:
                # Refused, or dropped before an answer: that process is going away. The
                # request is sent again elsewhere; a move carries its expectedVersion, so
                # if it had been applied the retry is refused and the audit finds it.
                self.ready[server.port] = False
                self.retried += 1
                continue
            return dict(response.json())


@dataclass
class Feed:
    """A client following one table's gameUpdates through the balancer; whenever its
    socket closes it resubscribes on a ready process with `since` (the last version it
    received), and it keeps what it saw."""

    balancer: Balancer
    table_id: str
    token: str
    last: int | None = None
    latest: dict[str, Any] | None = None
    changed_at: float = 0.0
    received: int = 0
    gaps: int = 0
    repeats: int = 0
    closes: list[int | None] = field(default_factory=list)
    # (when the socket closed, seconds until the new one's connection_ack), monotonic
    reconnected: list[tuple[float, float]] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)  # subscriptions refused, by code
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        """Follow the table until cancelled."""
        closed_at: float | None = None
        while True:
            server = await self.balancer.pick()
            try:
                async with connect(
                    server.ws_url,
                    subprotocols=[Subprotocol("graphql-transport-ws")],
                    open_timeout=10,
                    max_size=2**22,
                ) as ws:
                    init = {"Authorization": f"Bearer {self.token}"}
                    await ws.send(json.dumps({"type": "connection_init", "payload": init}))
                    ack = json.loads(await asyncio.wait_for(ws.recv(), 10))
                    assert ack["type"] == "connection_ack", ack
                    if closed_at is not None:
                        self.reconnected.append((closed_at, time.monotonic() - closed_at))
                        closed_at = None
                    payload = {
                        "query": GAME_UPDATES,
                        "variables": {"t": self.table_id, "s": self.last},
                    }
                    await ws.send(json.dumps({"id": "1", "type": "subscribe", "payload": payload}))
                    async for raw in ws:
                        message = json.loads(raw)
                        if message.get("type") == "ping":
                            await ws.send(json.dumps({"type": "pong"}))
                        if not self._message(message):
                            break
                await asyncio.sleep(0.2)  # refused (counted): subscribe again, untimed
            except ConnectionClosed as closed:
                self.closes.append(closed.rcvd.code if closed.rcvd is not None else None)
                closed_at = closed_at or time.monotonic()
            except (OSError, TimeoutError):
                closed_at = closed_at or time.monotonic()
                self.balancer.ready[server.port] = False
                await asyncio.sleep(0.05)

    def _message(self, message: dict[str, Any]) -> bool:
        """Take one message; False when the subscription ended with an error (it is
        counted, and the follower subscribes again)."""
        if message.get("type") == "error":
            first = (message.get("payload") or [{}])[0]
            code = str((first.get("extensions") or {}).get("code") or first.get("message"))
            self.errors[code] = self.errors.get(code, 0) + 1
            return False
        if message.get("type") != "next":
            return True
        update = message["payload"]["data"]["gameUpdates"]
        version = int(update["view"]["version"])
        if self.last is not None:
            if version <= self.last:
                self.repeats += 1
                return True
            if version != self.last + 1:
                self.gaps += 1
        self.last = version
        self.latest = update["view"]
        self.received += 1
        self.changed_at = time.monotonic()
        self.changed.set()
        return True

    async def next_change(self, timeout: float) -> None:
        """Wait for the next update (or `timeout` seconds)."""
        self.changed.clear()
        with suppress(TimeoutError):
            await asyncio.wait_for(self.changed.wait(), timeout)

    async def until(self, version: int, timeout: float) -> bool:
        """Wait until this follower has received `version`; whether it did in time."""
        deadline = time.monotonic() + timeout
        while self.last is None or self.last < version:
            if time.monotonic() > deadline:
                return False
            await self.next_change(deadline - time.monotonic())
        return True


@dataclass(frozen=True)
class Ack:
    """A human move whose mutation was answered with data."""

    table_id: str
    seat: str
    kind: str
    version: int  # the table's version after the move, as the answer gave it


@dataclass
class Table:
    """One table of the load: its humans' tokens (by seat) and its followers."""

    table_id: str
    tokens: dict[str, str]
    feeds: list[Feed]
    north_id: str = ""
    acks: list[Ack] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)  # answers with an error, by code

    def failed(self, answer: dict[str, Any]) -> None:
        """Count an answer with an error, by its code."""
        first = (answer.get("errors") or [{}])[0]
        code = str((first.get("extensions") or {}).get("code") or first.get("message"))
        self.errors[code] = self.errors.get(code, 0) + 1

    @property
    def eye(self) -> Feed:
        """The follower the table's driver watches for its humans' turns."""
        return self.feeds[0]


def humans_turn(view: dict[str, Any]) -> str | None:
    """The human seat a spectator's view says is to act (None: a bot's turn, or nobody's,
    or a trick's fourth card, which already names the next leader)."""
    seat = view["turn"]
    if seat not in HUMANS or view["phase"] not in ("BIDDING", "EXCHANGE", "PLAYING"):
        return None
    if view["phase"] == "PLAYING" and len(view["currentTrick"]) >= 4:
        return None
    return str(seat)


async def drive(table: Table, balancer: Balancer, pace: float, stop: asyncio.Event) -> None:
    """Make the table's human moves, each `pace` seconds after the change that made it
    that human's turn, over HTTP through the balancer, until `stop`."""
    eye = table.eye
    while not stop.is_set():
        view = eye.latest
        seat = humans_turn(view) if view is not None else None
        if view is None or seat is None:
            await eye.next_change(1.0)
            continue
        await asyncio.sleep(max(0.0, eye.changed_at + pace - time.monotonic()))
        if stop.is_set():
            return
        token = table.tokens[seat]
        read = await balancer.post(token, OWN_VIEW, t=table.table_id)
        own = (read.get("data") or {}).get("game")
        if own is None:
            table.failed(read)
            await asyncio.sleep(0.2)
            continue
        if own["turn"] != seat or own["version"] < view["version"]:
            await eye.next_change(1.0)
            continue
        kind, variables = choose_move(own)
        name, declared, passed = _MOVES[kind]
        mutation = (
            f"mutation($t: ID!, {declared}$v: Int) "
            f"{{ {name}(tableId: $t, {passed}expectedVersion: $v) {{ version }} }}"
        )
        answer = await balancer.post(
            token, mutation, t=table.table_id, v=own["version"], **variables
        )
        if answer.get("errors"):
            table.failed(answer)
            await eye.next_change(1.0)
            continue
        version = int(answer["data"][name]["version"])
        table.acks.append(Ack(table.table_id, seat, kind, version))
        await eye.until(version, 10.0)


async def sign_up(balancer: Balancer) -> tuple[str, str]:
    """A new player's token and id."""
    name = f"roll{time.monotonic_ns() % 10**8}x{next(_names)}"[:20]
    answer = await balancer.post(None, SIGN_UP, u=name, p="password123")
    assert not answer.get("errors"), answer
    data = answer["data"]["signUp"]
    return str(data["token"]), str(data["player"]["id"])


async def open_table(
    balancer: Balancer, spectators: int, turn_seconds: int = 300, north_watches: bool = False
) -> Table:
    """A table of two humans (NORTH, SOUTH) and two bots, its game started, with
    `spectators` followers, and NORTH following it too if `north_watches` (then NORTH
    counts as connected: presence); the first follower is the driver's eye."""
    (north, north_id), (south, _) = await asyncio.gather(sign_up(balancer), sign_up(balancer))
    created = await balancer.post(
        north,
        "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }",
        i={"name": "rolling", "turnSeconds": turn_seconds},
    )
    assert not created.get("errors"), created
    table_id = str(created["data"]["createTable"]["id"])
    joined = await balancer.post(
        south, "mutation($t: ID!) { joinTable(tableId: $t, seat: SOUTH) { id } }", t=table_id
    )
    assert not joined.get("errors"), joined
    feeds = [Feed(balancer, table_id, north)] if north_watches else []
    for _ in range(spectators if north_watches else max(1, spectators)):
        token, _ = await sign_up(balancer)
        feeds.append(Feed(balancer, table_id, token))
    table = Table(table_id, {"NORTH": north, "SOUTH": south}, feeds, north_id=north_id)
    for seat in BOTS:
        added = await balancer.post(
            north,
            "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }",
            t=table_id,
            s=seat,
        )
        assert not added.get("errors"), added
    return table


@dataclass(frozen=True)
class Restart:
    """One process drained and started again."""

    port: int
    signalled_at: float  # monotonic
    exit_code: int
    drained_seconds: float  # from SIGTERM to the process's exit
    back_seconds: float  # from SIGTERM to ready again


async def restart_each(
    servers: Sequence[LiveServer], balancer: Balancer, shutdown_seconds: float, pause: float
) -> list[Restart]:
    """Each process in turn: SIGTERM, wait for its exit, start it again, wait until the
    balancer sends it new connections, then `pause` seconds before the next."""
    restarts = []
    for server in servers:
        signalled = time.monotonic()
        server.signal(signal.SIGTERM)
        code = await asyncio.to_thread(server.exit_code, shutdown_seconds + 10)
        drained = time.monotonic() - signalled
        await asyncio.to_thread(server.start)
        await balancer.until_ready(server)
        back = time.monotonic() - signalled
        restarts.append(Restart(server.port, signalled, code, drained, back))
        await asyncio.sleep(pause)
    return restarts


@dataclass
class Audit:
    """The acknowledged moves against the move log, and what the followers saw."""

    acknowledged: int = 0
    applied: int = 0
    lost: int = 0
    doubled: int = 0
    errors: dict[str, int] = field(default_factory=dict)  # answers with an error, by code
    gaps: int = 0
    repeats: int = 0
    behind: int = 0  # followers that never received their table's last version
    stalled: int = 0  # tables left with a bot to move
    reconnected: list[tuple[float, float]] = field(default_factory=list)
    close_codes: dict[int | None, int] = field(default_factory=dict)

    @property
    def reconnects(self) -> list[float]:
        """Every reconnection's time, close to connection_ack (seconds)."""
        return [seconds for _, seconds in self.reconnected]

    def lines(self) -> list[str]:
        """The figures, one per line."""
        timing = percentiles(self.reconnects)
        return [
            f"moves acknowledged: {self.acknowledged}",
            f"moves applied:      {self.applied}",
            f"moves lost:         {self.lost}",
            f"moves doubled:      {self.doubled}",
            f"answers with an error: {dict(sorted(self.errors.items())) or 'none'}",
            f"gaps seen:          {self.gaps} (repeats {self.repeats}, followers behind "
            f"{self.behind})",
            f"tables stalled on a bot: {self.stalled}",
            f"reconnections:      {len(self.reconnected)} ({timing}); close codes "
            f"{dict(sorted(self.close_codes.items(), key=str))}",
        ]


def percentiles(seconds: Sequence[float]) -> str:
    """p50 and p95 of some durations, in milliseconds ("none" without any)."""
    if not seconds:
        return "none"
    if len(seconds) == 1:
        return f"one: {seconds[0] * 1000:.0f} ms"
    cuts = statistics.quantiles(seconds, n=100, method="inclusive")
    return f"p50 {cuts[49] * 1000:.0f} ms, p95 {cuts[94] * 1000:.0f} ms"


async def settle(tables: Sequence[Table], timeout: float) -> int:
    """After the humans stop: wait until no table has a bot to move; how many still do."""
    deadline = time.monotonic() + timeout

    def owed(table: Table) -> bool:
        view = table.eye.latest
        return view is not None and view["phase"] != "GAME_OVER" and view["turn"] in BOTS

    while any(owed(t) for t in tables) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return sum(owed(t) for t in tables)


async def audit(database_url: str, tables: Sequence[Table], stalled: int) -> Audit:
    """Compare every table's acknowledged moves with its move log, and check that every
    follower received the table's last version without a gap."""
    result = Audit(stalled=stalled)
    versions: dict[str, int] = {}
    connection = await asyncpg.connect(plain_url(database_url))
    try:
        for table in tables:
            rows = await connection.fetch(
                "SELECT seq, changes, move FROM moves WHERE table_id = $1 ORDER BY seq",
                table.table_id,
            )
            version = int(
                await connection.fetchval(
                    "SELECT version FROM tables WHERE id = $1", table.table_id
                )
            )
            _audit_table(
                result, table, [(r["seq"], r["changes"], json.loads(r["move"])) for r in rows]
            )
            versions[table.table_id] = version
    finally:
        await connection.close()
    caught_up = await asyncio.gather(
        *(feed.until(versions[t.table_id], 10.0) for t in tables for feed in t.feeds)
    )
    result.behind = caught_up.count(False)
    for table in tables:
        for code, count in table.errors.items():
            result.errors[code] = result.errors.get(code, 0) + count
        for feed in table.feeds:
            for code, count in feed.errors.items():
                result.errors[code] = result.errors.get(code, 0) + count
            result.gaps += feed.gaps
            result.repeats += feed.repeats
            result.reconnected.extend(feed.reconnected)
            for code in feed.closes:
                result.close_codes[code] = result.close_codes.get(code, 0) + 1
    return result


def _audit_table(result: Audit, table: Table, rows: list[tuple[int, int, dict[str, Any]]]) -> None:
    humans = []
    timed_out: str | None = None
    for seq, changes, entry in rows:
        if entry["type"] == "timeout":
            timed_out = entry.get("seat")
            continue
        human = entry["type"] in MOVE_TYPES and entry.get("seat") in HUMANS
        if human and entry["seat"] != timed_out:  # not the server's move for a silent seat
            humans.append((seq + changes - 1, entry["type"], entry["seat"]))
        timed_out = None
    logged = {end: (kind, seat) for end, kind, seat in humans}
    matched = sum(1 for ack in table.acks if logged.get(ack.version) == (ack.kind, ack.seat))
    result.acknowledged += len(table.acks)
    result.applied += len(humans)
    result.lost += len(table.acks) - matched
    result.doubled += len(humans) - matched
