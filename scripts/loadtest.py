"""Load test: K tables of 4 human WebSocket clients playing against the server (1+ processes).

Each table has four signed-up players (HTTP `signUp`), one creates a (seeded) table
and the other three join it; every player then opens its own WebSocket
(`graphql-transport-ws`, auth in the `connection_init` payload) and subscribes to
`gameUpdates`. A driver per table then makes moves over HTTP for whichever seat
is to act (a `TRICKS 3` bid, or the first of its `legalPlays`) and measures the
latency from the start of the move's request to the moment all four subscribers
have an update whose `version` is at least the version the mutation answered.
No bots are used. A finished game is replaced by a new table for the same slot.
Before the measurement each table plays 0-55 moves (unmeasured), so that the tables
are spread over their hands as on a live server instead of all ending their tricks
and hands in the same second (`--lockstep` skips that).

Usage (from the repository root):

    .venv/bin/python scripts/loadtest.py                       # 250 tables, 1 move/s each, 30 s
    .venv/bin/python scripts/loadtest.py --tables 10 --duration 10
    .venv/bin/python scripts/loadtest.py --tables 50 --saturate
    .venv/bin/python scripts/loadtest.py --url http://127.0.0.1:8000/graphql --server-pid 1234
    .venv/bin/python scripts/loadtest.py --postgres --tables 50 --saturate   # 1 process, PG+Redis
    .venv/bin/python scripts/loadtest.py --processes 2 --tables 50 --saturate

Other flags: --rate R (moves/s per table, default 1), --duration S (measured, default
30), --warmup S (default 3), --json OUT (all figures), --samples CSV (every measured
move), --py-spy OUT (profile the server over the measured window; needs py-spy in the
venv), --random-deals, --lockstep, --no-uvloop, --quiet, --postgres, and --processes N.

Without `--url` the script starts its own `spades serve` on a free port with a
temporary SQLite file (cheap argon2, seeded tables allowed, rate limits off, server
log level `warning`), and stops it at the end, on Ctrl-C and on errors. With `--url` it
uses a running server (127.0.0.1 only); give `--server-pid` to get its memory
and CPU figures.

With `--postgres` the started server uses PostgreSQL + Redis instead: a fresh database
`spades_loadtest_<hex>` is created (asyncpg, user `postgres`, via database `test` on
127.0.0.1:5432, trust auth), migrated once with `spades migrate`, and dropped at the end
(also on errors and Ctrl-C); the servers get SPADES_DATABASE_URL and
SPADES_BROKER_URL=redis://127.0.0.1:6379/0 besides the settings above. With
`--processes N` (N > 1 implies `--postgres`) N such servers run on their own ports and
player i of table t uses process (4t+i) mod N for both HTTP and its WebSocket, so every
update crosses Redis. Server RSS and CPU are then summed over the processes, with a
per-process breakdown; "whole machine" CPU/move includes PostgreSQL and Redis.

It prints: tables, subscriptions, duration, moves completed, moves/s, latency
percentiles (request start -> all 4 subscribers updated, and the HTTP answer
alone), errors by kind, server RSS before/after the sockets and KiB per
connection, the CPU used by the server (and whether its main thread was running,
waiting for a CPU, or idle), by this load generator and by other processes. The
load generator shares the machine with the server, so saturation figures are
what the server did while competing with its own clients for CPU.

Every loop is bounded: setup steps and waits have timeouts, the drivers stop at
the end of the measurement window, and the whole run has a hard deadline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import functools
import json
import math
import os
import random
import resource
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
import types
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.typing import Subprotocol

ROOT = Path(__file__).resolve().parents[1]
SEATS = ("NORTH", "EAST", "SOUTH", "WEST")
PASSWORD = "loadtest-password"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}

SIGN_UP = "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }"
CREATE_TABLE = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
JOIN_TABLE = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
PLACE_BID = (
    "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) { version } }"
)
PLAY_CARD = "mutation($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) { version } }"
REVEAL_HAND = "mutation($t: ID!) { revealHand(tableId: $t) { version } }"
GAME_UPDATES = (
    "subscription($t: ID!) { gameUpdates(tableId: $t) { event view { version turn phase "
    "handNumber handWithheld legalPlays { suit rank } } } }"
)

SERVER_START_TIMEOUT = 30.0
HTTP_TIMEOUT = 15.0
WS_STEP_TIMEOUT = 15.0
SETUP_TIMEOUT_PER_TABLE = 60.0
DRAIN_TIMEOUT = 20.0
MAX_DURATION = 3600.0
SETUP_BUDGET = 300.0  # plus 0.5 s per table: the hard deadline of the whole run
MIGRATE_TIMEOUT = 120.0
MAX_PROCESSES = 16
HAND_MOVES = 56  # 4 bids and 52 cards (a Blind Nil reveal adds one)
SPREAD_MOVES_PER_S = 50.0  # the slowest spreading speed allowed before giving up

# --postgres / --processes N > 1: one fresh database on this server, one Redis.
PG_HOST = "127.0.0.1"
PG_PORT = 5432
PG_USER = "postgres"
PG_MAINTENANCE_DB = "test"  # where CREATE/DROP DATABASE run
PG_TIMEOUT = 30.0
REDIS_URL = "redis://127.0.0.1:6379/0"

T = TypeVar("T")


# --------------------------------------------------------------------------- results


@dataclass
class Stats:
    """Everything measured inside the recording window."""

    latencies: list[float] = field(default_factory=list)  # s: request start -> all 4 updated
    http_latencies: list[float] = field(default_factory=list)  # s: request start -> answer
    starts: list[float] = field(default_factory=list)  # perf_counter at each move's request
    errors: Counter[str] = field(default_factory=Counter)
    late_ticks: int = 0  # rate mode: a move started later than its slot
    gaps: int = 0  # an update whose version did not follow the previous one
    updates_received: int = 0
    games_finished: int = 0
    recording: bool = False

    def error(self, kind: str) -> None:
        """Count an error (always, warmup included: errors are never noise)."""
        self.errors[kind] += 1


def percentile(sorted_values: list[float], pct: float) -> float:
    """Nearest-rank percentile of an already sorted list (nan when empty)."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(pct / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


# --------------------------------------------------------------------------- process figures


def read_rss_kib(pid: int) -> int | None:
    """VmRSS of a process in KiB, from /proc."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def read_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (all its threads), from /proc."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def read_schedstat(pid: int) -> tuple[float, float] | None:
    """(seconds on a CPU, seconds runnable but waiting for a CPU) of a process's main
    thread, from /proc/PID/task/PID/schedstat."""
    try:
        with open(f"/proc/{pid}/task/{pid}/schedstat", encoding="ascii") as stat:
            running, waiting, _slices = stat.read().split()
    except (OSError, ValueError):
        return None
    return int(running) / 1e9, int(waiting) / 1e9


def read_machine_cpu() -> tuple[float, float] | None:
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            values = [int(v) for v in stat.readline().split()[1:]]
    except OSError:
        return None
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    return total - idle, total


# --------------------------------------------------------------------------- the server


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _die_with_parent() -> None:
    """In the child: get SIGTERM when the load generator dies (Linux prctl), best effort."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def spades_executable() -> Path:
    """The `spades` command of this venv."""
    executable = Path(sys.executable).parent / "spades"
    if not executable.exists():
        executable = ROOT / ".venv" / "bin" / "spades"
    return executable


def server_env(log_level: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a started server (and of `spades migrate`)."""
    return {
        **os.environ,
        "SPADES_ARGON2_TIME_COST": "1",
        "SPADES_ARGON2_MEMORY_KIB": "1024",
        "SPADES_ALLOW_SEEDED_TABLES": "1",
        # 1,000 sign-ups from 127.0.0.1 would trip the per-IP sign-up limit.
        "SPADES_RATE_LIMITS": "0",
        "SPADES_LOG_LEVEL": log_level,
        **(extra or {}),
    }


class ServerProcess:
    """`spades serve` on a free port: by default with a temporary SQLite file, or with the
    given database URL and extra environment (PostgreSQL + Redis)."""

    def __init__(
        self,
        log_level: str,
        database_url: str | None = None,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.directory = tempfile.TemporaryDirectory(prefix="spades-loadtest-")
        self.database = Path(self.directory.name) / "loadtest.db"
        self.database_url = database_url or f"sqlite+aiosqlite:///{self.database}"
        self.extra_env = extra_env or {}
        self.log_path = Path(self.directory.name) / "server.log"
        self.log_level = log_level
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The GraphQL endpoint."""
        return f"http://127.0.0.1:{self.port}/graphql"

    @property
    def pid(self) -> int | None:
        """The server's process id while it runs."""
        return self.process.pid if self.process is not None else None

    def launch(self) -> None:
        """Start the server process (without waiting for it)."""
        command = [
            str(spades_executable()),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--database-url",
            self.database_url,
        ]
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child process writes to it
        try:
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=server_env(self.log_level, self.extra_env),
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=_die_with_parent,  # no threads exist yet
            )
        finally:
            log.close()

    def wait_healthy(self, deadline: float) -> None:
        """Wait (until the monotonic `deadline`) for /healthz to answer."""
        assert self.process is not None
        health = f"http://127.0.0.1:{self.port}/healthz"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited at start:\n{self.tail_log()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(health, timeout=1, trust_env=False).status_code == 200:
                    return
            time.sleep(0.1)
        raise RuntimeError(f"the server did not answer /healthz in time:\n{self.tail_log()}")

    def start(self) -> None:
        """Start the server and wait (bounded) until /healthz answers."""
        self.launch()
        self.wait_healthy(time.monotonic() + SERVER_START_TIMEOUT)

    def tail_log(self, chars: int = 3000) -> str:
        """The end of what the server printed."""
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s; remove the temporary files. Idempotent."""
        process, self.process = self.process, None
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        self.directory.cleanup()


def stop_servers(servers: list[ServerProcess]) -> None:
    """SIGTERM every server at once, then wait for each (SIGKILL after 10 s). Idempotent."""
    for server in servers:
        if server.process is not None and server.process.poll() is None:
            with contextlib.suppress(OSError):
                server.process.send_signal(signal.SIGTERM)
    for server in servers:
        with contextlib.suppress(Exception):
            server.stop()


class PostgresDatabase:
    """A fresh PostgreSQL database for one run (created and dropped as user `postgres`,
    through the maintenance database `test`, over 127.0.0.1 with trust auth)."""

    def __init__(self) -> None:
        self.name = f"spades_loadtest_{secrets.token_hex(4)}"
        self.created = False

    @property
    def url(self) -> str:
        """The SQLAlchemy URL the servers use."""
        return f"postgresql+asyncpg://{PG_USER}@{PG_HOST}:{PG_PORT}/{self.name}"

    async def _execute(self, sql: str) -> None:
        import asyncpg  # type: ignore[import-untyped]

        connection = await asyncpg.connect(
            host=PG_HOST,
            port=PG_PORT,
            user=PG_USER,
            database=PG_MAINTENANCE_DB,
            timeout=PG_TIMEOUT,
        )
        try:
            await connection.execute(sql, timeout=PG_TIMEOUT)
        finally:
            await connection.close(timeout=PG_TIMEOUT)

    def create(self) -> None:
        """CREATE DATABASE (the name is ours: lowercase hex, no quoting issue)."""
        self.created = True  # from now on drop() tries (IF EXISTS), even if interrupted
        try:
            asyncio.run(asyncio.wait_for(self._execute(f'CREATE DATABASE "{self.name}"'), 60))
        except (OSError, TimeoutError):
            raise
        except Exception as exc:  # asyncpg's own errors
            raise RuntimeError(f"could not create database {self.name}: {exc}") from exc

    def drop(self) -> None:
        """DROP DATABASE ... WITH (FORCE), if created; best effort, bounded. Idempotent."""
        if not self.created:
            return
        sql = f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)'
        try:
            asyncio.run(asyncio.wait_for(self._execute(sql), 60))
        except Exception as exc:  # report, never hide the run's own result
            print(f"note: could not drop database {self.name}: {exc}", file=sys.stderr)
            return
        self.created = False

    def migrate(self, log_level: str) -> None:
        """`spades migrate` once, before any server starts (so the servers do not race)."""
        command = [str(spades_executable()), "migrate", "--database-url", self.url]
        env = server_env(log_level, {"SPADES_DATABASE_URL": self.url})
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=env,
            capture_output=True,
            timeout=MIGRATE_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            output = (done.stdout + done.stderr).decode(errors="replace")[-2000:]
            raise RuntimeError(f"spades migrate failed ({done.returncode}):\n{output}")


# --------------------------------------------------------------------------- clients


def _stub_sniffio() -> None:
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
    """One player: its token, its WebSocket, its subscription and its latest view."""

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
    """One table slot: four players, the current table, and the in-flight move.

    `apis[seat]` and `ws_urls[seat]` are the server process each seat talks to (all the
    same with one process; spread over the processes with several)."""

    def __init__(
        self,
        index: int,
        apis: list[Api],
        ws_urls: list[str],
        stats: Stats,
        run_id: str,
        seed: int | None,
    ) -> None:
        self.index = index
        self.apis = apis
        self.ws_urls = ws_urls
        self.stats = stats
        self.run_id = run_id
        self.seed = seed
        self.games = 0
        self.table_id = ""
        self.seats: list[SeatClient] = []
        # The move in flight: arrival times of updates per seat, until its version is known.
        self.in_flight = False
        self.target: int | None = None
        self.early: list[list[tuple[int, float]]] = [[], [], [], []]
        self.reached: list[float | None] = [None] * 4
        self.missing = 4
        self.done = asyncio.Event()

    # ---------------------------------------------------------------- setup

    async def sign_up(self) -> None:
        """Four new accounts."""
        names = [f"lt{self.run_id}{self.index}x{seat}" for seat in range(4)]
        results = await asyncio.gather(
            *(
                self.apis[seat].call(SIGN_UP, {"u": name, "p": PASSWORD})
                for seat, name in enumerate(names)
            )
        )
        self.seats = [
            SeatClient(self, seat, data["signUp"]["token"]) for seat, data in enumerate(results)
        ]

    async def new_table(self) -> None:
        """The NORTH player creates a table, the other three join it (the game starts)."""
        options: dict[str, Any] = {"name": f"loadtest {self.index}"}
        if self.seed is not None:
            options["seed"] = self.seed * 1000 + self.games
        try:
            data = await self.apis[0].call(CREATE_TABLE, {"i": options}, self.seats[0].token)
        except ApiError as exc:
            if exc.code != "FORBIDDEN" or "seed" not in options:
                raise
            self.seed = None  # a server without seeded tables: deal at random
            options.pop("seed")
            data = await self.apis[0].call(CREATE_TABLE, {"i": options}, self.seats[0].token)
        self.table_id = data["createTable"]["id"]
        for seat in range(1, 4):
            await self.apis[seat].call(
                JOIN_TABLE, {"t": self.table_id, "s": SEATS[seat]}, self.seats[seat].token
            )
        self.games += 1

    async def connect(self) -> None:
        """Four sockets (each to its seat's server process), each subscribed to the table."""
        for seat in self.seats:
            await seat.open(self.ws_urls[seat.index])
            await seat.subscribe(self.table_id)

    async def spread(self, moves: int) -> None:
        """Play `moves` moves at once (unmeasured), so that this table is somewhere else in
        its hand than the others when the measurement starts."""
        for _ in range(moves):
            if not await self.step():
                raise RuntimeError(f"table {self.index}: a move failed while spreading")

    async def replace_table(self) -> None:
        """After GAME_OVER: a new table for the same four players, same sockets."""
        await self.new_table()
        for seat in self.seats:
            await seat.subscribe(self.table_id)

    async def close(self) -> None:
        """Close the four sockets."""
        await asyncio.gather(*(seat.close() for seat in self.seats), return_exceptions=True)

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
        self.in_flight = True
        self.target = None
        self.early = [[], [], [], []]
        self.reached = [None] * 4
        self.missing = 4
        self.done.clear()

    def _expect(self, version: int) -> None:
        """The move's version is known: settle the updates that arrived before it."""
        for seat in range(4):
            first = next((t for v, t in self.early[seat] if v >= version), None)
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
        """One move: choose, send, wait for all four subscribers. False if it failed."""
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
            self.stats.error("timeout waiting for the 4 subscribers")
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


# --------------------------------------------------------------------------- the run


def summed(values: list[float | None] | list[int | None]) -> float | None:
    """The sum of per-process figures; None when there are none or one is unknown."""
    if not values or any(v is None for v in values):
        return None
    return float(sum(v for v in values if v is not None))


def read_rss_total_kib(pids: list[int]) -> int | None:
    """VmRSS summed over the server processes, in KiB (None if one is unknown)."""
    total = summed([read_rss_kib(pid) for pid in pids])
    return None if total is None else int(total)


@dataclass
class Sample:
    """Process and machine counters at one instant (server figures per server process)."""

    at: float
    server_cpus: list[float | None]
    own_cpu: float
    machine: tuple[float, float] | None
    # Per server process, its main thread: (on CPU, runnable-waiting).
    main_threads: list[tuple[float, float] | None]

    @classmethod
    def take(cls, pids: list[int]) -> Sample:
        """Read the counters now."""
        return cls(
            at=time.perf_counter(),
            server_cpus=[read_cpu_seconds(pid) for pid in pids],
            own_cpu=time.process_time(),
            machine=read_machine_cpu(),
            main_threads=[read_schedstat(pid) for pid in pids],
        )

    @property
    def server_cpu(self) -> float | None:
        """CPU seconds of all the server processes together."""
        return summed(self.server_cpus)


def main_thread_shares(before: Sample, after: Sample, measured: float) -> list[dict[str, float]]:
    """Per server process: share of the window its main thread was on a CPU / waiting."""
    shares = []
    for first, last in zip(before.main_threads, after.main_threads, strict=True):
        if first is None or last is None or not measured:
            return []
        shares.append(
            {
                "on_cpu": (last[0] - first[0]) / measured,
                "waiting_for_cpu": (last[1] - first[1]) / measured,
            }
        )
    return shares


async def monitor(stats: Stats, pids: list[int], end: float, every: float) -> None:
    """Progress on stderr every `every` seconds (bounded by `end`)."""
    last = Sample.take(pids)
    moves = 0
    errors = 0
    for _ in range(int(MAX_DURATION / every) + 1):
        await asyncio.sleep(every)
        now = Sample.take(pids)
        new = stats.latencies[moves:]
        moves = len(stats.latencies)
        total_errors = sum(stats.errors.values())
        span = now.at - last.at
        window_p95 = percentile(sorted(new), 95) * 1000
        server = ""
        if now.server_cpu is not None and last.server_cpu is not None:
            server = f" server CPU {100 * (now.server_cpu - last.server_cpu) / span:.0f}%"
        rss = read_rss_total_kib(pids)
        print(
            f"  [{time.strftime('%H:%M:%S')}] {len(new) / span:7.1f} moves/s  "
            f"p95 {window_p95:7.1f} ms  errors +{total_errors - errors}{server}"
            f"  own CPU {100 * (now.own_cpu - last.own_cpu) / span:.0f}%"
            + (f"  server RSS {rss / 1024:.0f} MiB" if rss else ""),
            file=sys.stderr,
        )
        errors = total_errors
        last = now
        if now.at >= end:
            return


def start_profilers(
    out: str | None, pids: list[int], seconds: float
) -> list[subprocess.Popen[bytes]]:
    """`py-spy record` of each server process over the measured window, if asked and
    possible (with several processes, OUT gets a `.pN` suffix before its extension)."""
    if out is None:
        return []
    if not pids:
        print("note: --py-spy needs the server's PID (--server-pid)", file=sys.stderr)
        return []
    executable = Path(sys.executable).parent / "py-spy"
    if not executable.exists():
        print(f"note: no {executable}; pip install py-spy to profile", file=sys.stderr)
        return []
    if len(pids) == 1:
        return [start_profiler(str(executable), out, pids[0], seconds)]
    path = Path(out)
    return [
        start_profiler(
            str(executable), str(path.with_name(f"{path.stem}.p{n}{path.suffix}")), pid, seconds
        )
        for n, pid in enumerate(pids)
    ]


def start_profiler(executable: str, out: str, pid: int, seconds: float) -> subprocess.Popen[bytes]:
    """One `py-spy record` of one process."""
    fmt = "speedscope" if out.endswith(".json") else "flamegraph" if out.endswith(".svg") else "raw"
    command = [
        executable,
        "record",
        "--pid",
        str(pid),
        "--rate",
        "200",
        "--gil",
        "--nonblocking",
    ]
    command += ["--duration", str(max(1, round(seconds))), "--format", fmt, "-o", out]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def stop_profiler(profiler: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait (bounded) for py-spy to write its file."""
    try:
        _out, err = profiler.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        profiler.kill()
        profiler.communicate(timeout=10)
        print("note: py-spy did not finish in time", file=sys.stderr)
        return
    if profiler.returncode != 0:
        print(f"note: py-spy failed: {err.decode(errors='replace')[-500:]}", file=sys.stderr)


def write_samples(path: str, stats: Stats, origin: float) -> None:
    """One CSV row per measured move, in start order."""
    rows = sorted(zip(stats.starts, stats.latencies, stats.http_latencies, strict=True))
    lines = ["start_s,latency_ms,http_ms"]
    lines += [f"{s - origin:.4f},{lat * 1000:.2f},{http * 1000:.2f}" for s, lat, http in rows]
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def ws_url_of(http_url: str) -> str:
    """ws://host:port/path of an http://host:port/path URL."""
    parts = urlsplit(http_url)
    return urlunsplit(("wss" if parts.scheme == "https" else "ws", *parts[1:]))


async def run(
    args: argparse.Namespace, urls: list[str], pids: list[int], backend: str
) -> dict[str, Any]:
    """Set up, measure, tear down; returns the figures. `urls` are the server processes'
    GraphQL endpoints: player i of table t talks to process (t*4+i) % len(urls)."""
    stats = Stats()
    quiet: bool = args.quiet
    n = len(urls)
    # One small pool per table (and process): httpcore scans every connection of a pool
    # for every request, so one shared pool of hundreds of connections costs ~10 ms CPU
    # per move.
    apis: list[Api] = []
    slots = []
    run_id = secrets.token_hex(3)
    seed_base = None if args.random_deals else 1
    for i in range(args.tables):
        processes = [(i * 4 + seat) % n for seat in range(4)]
        by_process = {p: Api(urls[p], pool=4) for p in dict.fromkeys(processes)}
        apis += by_process.values()
        slots.append(
            TableSlot(
                i,
                [by_process[p] for p in processes],
                [ws_url_of(urls[p]) for p in processes],
                stats,
                run_id,
                None if seed_base is None else seed_base + i,
            )
        )
    try:
        t = time.perf_counter()
        await bounded_gather(
            [s.sign_up for s in slots], max(1, args.setup_concurrency // 4), "sign-ups", quiet
        )
        signup_s = time.perf_counter() - t
        t = time.perf_counter()
        await bounded_gather([s.new_table for s in slots], args.setup_concurrency, "tables", quiet)
        tables_s = time.perf_counter() - t
        await asyncio.sleep(1.0)
        rss_before = read_rss_total_kib(pids)
        rss_before_each = [read_rss_kib(pid) for pid in pids]
        t = time.perf_counter()
        await bounded_gather([s.connect for s in slots], args.setup_concurrency, "sockets", quiet)
        sockets_s = time.perf_counter() - t
        await asyncio.sleep(1.0)
        rss_after = read_rss_total_kib(pids)
        rss_after_each = [read_rss_kib(pid) for pid in pids]
        connections = 4 * len(slots)
        spread_s = 0.0
        if not args.lockstep:
            # Tables that all start together would end every trick and every hand in the
            # same second (a burst of 2-4 updates per move); on a live server they are
            # everywhere in their hands. Each table first plays 0..55 moves.
            t = time.perf_counter()
            offsets = random.Random(args.tables).choices(range(HAND_MOVES), k=len(slots))
            await bounded_gather(
                [functools.partial(s.spread, k) for s, k in zip(slots, offsets, strict=True)],
                len(slots),
                "spread over their hands",
                quiet,
                max(SETUP_TIMEOUT_PER_TABLE, sum(offsets) / SPREAD_MOVES_PER_S),
            )
            spread_s = time.perf_counter() - t

        if not quiet:
            mode = "saturate" if args.saturate else f"{args.rate:g} move/s per table"
            print(
                f"  driving {len(slots)} tables ({mode}): {args.warmup:g} s warmup, "
                f"then {args.duration:g} s measured",
                file=sys.stderr,
            )
        start = time.perf_counter()
        record_from = start + args.warmup
        end = record_from + args.duration
        if args.saturate:
            max_steps = int((end - start) * 10_000) + 10
            drivers = [drive_saturate(s, end, max_steps) for s in slots]
        else:
            drivers = [drive_rate(s, 1.0 / args.rate, start, end) for s in slots]
        tasks = [asyncio.create_task(d) for d in drivers]
        monitor_task = (
            None
            if quiet
            else asyncio.create_task(monitor(stats, pids, end, min(5.0, args.duration)))
        )
        await asyncio.sleep(max(0.0, record_from - time.perf_counter()))
        stats.recording = True
        profilers = start_profilers(args.py_spy, pids, end - time.perf_counter())
        before = Sample.take(pids)
        await asyncio.sleep(max(0.0, end - time.perf_counter()))
        after = Sample.take(pids)
        for profiler in profilers:
            await asyncio.to_thread(stop_profiler, profiler, args.duration + 30)
        measured = after.at - before.at
        # Moves started inside the window finish (bounded) and still count.
        _done, pending = await asyncio.wait(tasks, timeout=DRAIN_TIMEOUT)
        stats.recording = False
        for task in pending:
            task.cancel()
        stuck = len(pending)
        await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            if not task.cancelled() and task.exception() is not None:
                stats.error(f"driver crashed: {type(task.exception()).__name__}")
        if monitor_task is not None:
            monitor_task.cancel()
            await asyncio.gather(monitor_task, return_exceptions=True)
        rss_end = read_rss_total_kib(pids)
        rss_end_each = [read_rss_kib(pid) for pid in pids]
    finally:
        await asyncio.gather(*(s.close() for s in slots), return_exceptions=True)
        await asyncio.gather(*(api.close() for api in apis), return_exceptions=True)

    if args.samples:
        write_samples(args.samples, stats, before.at)
    latencies = sorted(stats.latencies)
    http = sorted(stats.http_latencies)
    server_cpu = (
        (after.server_cpu - before.server_cpu) / measured
        if after.server_cpu is not None and before.server_cpu is not None
        else None
    )
    server_cpu_each = [
        (last - first) / measured if first is not None and last is not None and measured else None
        for first, last in zip(before.server_cpus, after.server_cpus, strict=True)
    ]
    machine = None
    if after.machine is not None and before.machine is not None:
        busy = after.machine[0] - before.machine[0]
        total = after.machine[1] - before.machine[1]
        machine = busy / total * (os.cpu_count() or 1) if total else None
    shares = main_thread_shares(before, after, measured)
    return {
        "mode": "saturate" if args.saturate else "rate",
        "backend": backend,
        "server_processes": n,
        "server_pids": pids,
        "tables": len(slots),
        "subscriptions": connections,
        "rate_per_table": None if args.saturate else args.rate,
        "target_moves_per_s": None if args.saturate else args.rate * len(slots),
        "warmup_s": args.warmup,
        "duration_s": measured,
        "moves": len(latencies),
        "moves_per_s": len(latencies) / measured if measured else 0.0,
        "updates_received": stats.updates_received,
        "latency_ms": {
            "p50": percentile(latencies, 50) * 1000,
            "p95": percentile(latencies, 95) * 1000,
            "p99": percentile(latencies, 99) * 1000,
            "max": (latencies[-1] * 1000) if latencies else math.nan,
        },
        "http_latency_ms": {
            "p50": percentile(http, 50) * 1000,
            "p95": percentile(http, 95) * 1000,
            "p99": percentile(http, 99) * 1000,
            "max": (http[-1] * 1000) if http else math.nan,
        },
        "late_ticks": stats.late_ticks,
        "version_gaps": stats.gaps,
        "games_finished": stats.games_finished,
        "errors": dict(stats.errors),
        "stuck_drivers": stuck,
        "setup_s": {
            "sign_ups": signup_s,
            "tables": tables_s,
            "sockets": sockets_s,
            "spread": spread_s,
        },
        "lockstep": bool(args.lockstep),
        "server_rss_kib": {
            "before_sockets": rss_before,
            "after_sockets": rss_after,
            "end": rss_end,
        },
        "server_rss_kib_per_process": [
            {"before_sockets": b, "after_sockets": a, "end": e}
            for b, a, e in zip(rss_before_each, rss_after_each, rss_end_each, strict=True)
        ],
        "kib_per_connection": (
            (rss_after - rss_before) / connections
            if rss_after is not None and rss_before is not None
            else None
        ),
        "server_cpu_cores": server_cpu,
        "server_cpu_cores_per_process": server_cpu_each,
        # Summed over the processes (so up to N with N processes).
        "server_main_thread": (
            {key: sum(share[key] for share in shares) for key in ("on_cpu", "waiting_for_cpu")}
            if shares
            else None
        ),
        "server_main_thread_per_process": shares,
        "loadgen_cpu_cores": (after.own_cpu - before.own_cpu) / measured if measured else None,
        "machine_cpu_cores_busy": machine,
        "server_cpu_ms_per_move": (
            server_cpu * measured / len(latencies) * 1000 if server_cpu and latencies else None
        ),
        "loadgen_cpu_ms_per_move": (
            (after.own_cpu - before.own_cpu) / len(latencies) * 1000 if latencies else None
        ),
        "machine_cpu_ms_per_move": (
            machine * measured / len(latencies) * 1000 if machine and latencies else None
        ),
        "other_cpu_cores": (
            machine - server_cpu - (after.own_cpu - before.own_cpu) / measured
            if machine is not None and server_cpu is not None and measured
            else None
        ),
        "cpu_count": os.cpu_count(),
    }


def _fmt(value: float | None, unit: str = "", digits: int = 1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:,.{digits}f}{unit}"


def report(result: dict[str, Any], args: argparse.Namespace, loop_name: str) -> str:
    """The human-readable report."""
    lat, http, rss = result["latency_ms"], result["http_latency_ms"], result["server_rss_kib"]
    mode = (
        "saturate (each table moves as soon as all 4 saw the previous move)"
        if result["mode"] == "saturate"
        else f"{result['rate_per_table']:g} move/s per table "
        f"(target {result['target_moves_per_s']:,.0f} moves/s)"
    )
    errors = result["errors"]
    error_lines = (
        [f"    {kind}: {count}" for kind, count in sorted(errors.items(), key=lambda e: -e[1])]
        if errors
        else []
    )
    rss_mib = {k: (v / 1024 if v is not None else None) for k, v in rss.items()}
    lines = [
        "",
        "=== Spades load test ===",
        f"mode:               {mode}",
        f"server:             {result['server_processes']} process"
        f"{'es' if result['server_processes'] != 1 else ''}, {result['backend']}",
        f"tables:             {result['tables']}",
        f"subscriptions:      {result['subscriptions']} (one WebSocket each)",
        f"duration:           {result['duration_s']:.1f} s measured after "
        f"{result['warmup_s']:g} s warmup",
        f"moves completed:    {result['moves']:,}",
        f"moves/s:            {result['moves_per_s']:,.1f}",
        f"updates received:   {result['updates_received']:,} "
        f"({result['updates_received'] / max(result['duration_s'], 1e-9):,.0f}/s)",
        "latency (request start -> all 4 subscribers updated):",
        f"    p50 {_fmt(lat['p50'])} ms  p95 {_fmt(lat['p95'])} ms  "
        f"p99 {_fmt(lat['p99'])} ms  max {_fmt(lat['max'])} ms",
        "latency (request start -> HTTP answer):",
        f"    p50 {_fmt(http['p50'])} ms  p95 {_fmt(http['p95'])} ms  "
        f"p99 {_fmt(http['p99'])} ms  max {_fmt(http['max'])} ms",
        f"late ticks:         {result['late_ticks']} (rate mode: move started after its slot)",
        f"games finished:     {result['games_finished']}",
        f"errors:             {sum(errors.values())}",
        *error_lines,
        f"server RSS:         before sockets {_fmt(rss_mib['before_sockets'], ' MiB')}, "
        f"after {_fmt(rss_mib['after_sockets'], ' MiB')}, at end {_fmt(rss_mib['end'], ' MiB')}",
        f"memory/connection:  {_fmt(result['kib_per_connection'], ' KiB')} "
        "(RSS delta / connections, one subscription each)",
        f"CPU (cores):        server {_fmt(result['server_cpu_cores'], digits=2)}, "
        f"load generator {_fmt(result['loadgen_cpu_cores'], digits=2)}, "
        f"whole machine busy {_fmt(result['machine_cpu_cores_busy'], digits=2)} "
        f"of {result['cpu_count']} (other processes {_fmt(result['other_cpu_cores'], digits=2)})",
        "server main thread: "
        + (
            f"on a CPU {100 * main['on_cpu']:.0f}% of the time, runnable but waiting for a "
            f"CPU {100 * main['waiting_for_cpu']:.0f}%, blocked/idle the rest"
            if (main := result["server_main_thread"])
            else "n/a"
        ),
        f"server CPU/move:    {_fmt(result['server_cpu_ms_per_move'], ' ms', 2)} "
        f"(load generator {_fmt(result['loadgen_cpu_ms_per_move'], ' ms', 2)}, "
        f"whole machine {_fmt(result['machine_cpu_ms_per_move'], ' ms', 2)})",
        f"setup:              sign-ups {result['setup_s']['sign_ups']:.1f} s, "
        f"tables {result['setup_s']['tables']:.1f} s, sockets {result['setup_s']['sockets']:.1f} s"
        + (
            ", all tables in lockstep (same move of the same hand)"
            if result["lockstep"]
            else f", spread over their hands {result['setup_s']['spread']:.1f} s (each "
            f"table first played 0-{HAND_MOVES - 1} moves)"
        ),
        f"load generator:     one process, {loop_name} event loop, httpx + websockets",
        f"note: the load generator shares this {result['cpu_count']}-core machine with the "
        "server, so the figures (saturation moves/s above all) are what the server did "
        "while competing for CPU with its clients.",
    ]
    if result["mode"] == "rate" and result["tables"] >= 250 and result["rate_per_table"] >= 1:
        met = (
            lat["p95"] < 50
            and result["moves_per_s"] >= 0.95 * result["target_moves_per_s"]
            and not errors
        )
        one_sqlite = result["server_processes"] == 1 and result["backend"].startswith("SQLite")
        lines.append(
            "goal (250 tables x 1 move/s, p95 < 50 ms, no errors): "
            + ("MET" if met else "NOT MET")
            + ("" if one_sqlite else " (the goal is set for one process on SQLite)")
        )
    if result["server_processes"] > 1:
        lines.append("per server process (RSS at end, CPU cores, main thread on CPU / waiting):")
        per_rss = result["server_rss_kib_per_process"]
        per_cpu = result["server_cpu_cores_per_process"]
        per_main = result["server_main_thread_per_process"] or [None] * len(per_cpu)
        for number, (pid, rss_kib, cpu, main) in enumerate(
            zip(result["server_pids"], per_rss, per_cpu, per_main, strict=True)
        ):
            end_mib = rss_kib["end"] / 1024 if rss_kib["end"] is not None else None
            thread = (
                f"{100 * main['on_cpu']:.0f}% / {100 * main['waiting_for_cpu']:.0f}%"
                if main
                else "n/a"
            )
            lines.append(
                f"    #{number} PID {pid}: RSS {_fmt(end_mib, ' MiB')}, "
                f"CPU {_fmt(cpu, digits=2)}, main thread {thread}"
            )
        lines.append(
            "note: server RSS and CPU above are summed over the processes; each player "
            "talks to one process (player i of table t: process (4t+i) mod N), so every "
            "update crosses Redis."
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line flags."""
    parser = argparse.ArgumentParser(
        description="Load test: K tables x 4 WebSocket players against one Spades server."
    )
    parser.add_argument("--tables", type=int, default=250, help="concurrent tables (K)")
    parser.add_argument("--rate", type=float, default=1.0, help="moves/s per table")
    parser.add_argument("--duration", type=float, default=30.0, help="measured seconds")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds first")
    parser.add_argument(
        "--saturate", action="store_true", help="each table moves as fast as it can"
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="server processes sharing one PostgreSQL database and Redis (N > 1 implies "
        "--postgres); the players of a table are spread over them round-robin",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="run the started server(s) on a fresh PostgreSQL database + Redis, not SQLite",
    )
    parser.add_argument("--url", default=None, help="a running server's http://127.0.0.1:P/graphql")
    parser.add_argument("--server-pid", type=int, default=None, help="its PID, for RSS/CPU")
    parser.add_argument("--server-log-level", default="warning", help="for the started server")
    parser.add_argument("--setup-concurrency", type=int, default=32)
    parser.add_argument("--random-deals", action="store_true", help="unseeded tables")
    parser.add_argument(
        "--lockstep",
        action="store_true",
        help="no spreading: all tables start their hands together (tricks and hands end in "
        "the same second everywhere)",
    )
    parser.add_argument("--no-uvloop", action="store_true")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    parser.add_argument(
        "--samples",
        default=None,
        metavar="CSV",
        help="write every measured move: start (s into the window), latency ms, HTTP ms",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--py-spy",
        default=None,
        metavar="OUT",
        help="py-spy record (--gil) the server over the measured window (.svg, .json, else raw)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 5000:
        parser.error("--tables must be between 1 and 5000")
    if not 0 < args.rate <= 100:
        parser.error("--rate must be in (0, 100]")
    if not 0 < args.duration <= MAX_DURATION or not 0 <= args.warmup <= 600:
        parser.error("--duration must be in (0, 3600], --warmup in [0, 600]")
    if args.setup_concurrency < 1:
        parser.error("--setup-concurrency must be at least 1")
    if not 1 <= args.processes <= MAX_PROCESSES:
        parser.error(f"--processes must be between 1 and {MAX_PROCESSES}")
    if args.processes > 1:
        args.postgres = True
    if args.url is not None and args.postgres:
        parser.error("--url uses a running server: no --postgres, no --processes N > 1")
    if args.url is not None:
        parts = urlsplit(args.url)
        if parts.scheme != "http" or parts.hostname not in LOCAL_HOSTS:
            parser.error("--url must be http://127.0.0.1:PORT/graphql (local targets only)")
    return args


def raise_fd_limit(needed: int) -> None:
    """Raise the open-files soft limit (inherited by the server we start)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        target = hard if hard == resource.RLIM_INFINITY else min(hard, max(needed, soft))
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


def run_loop(main: Coroutine[Any, Any, T], use_uvloop: bool) -> tuple[T, str]:
    """Run `main` on uvloop when available (and wanted), else on asyncio's loop."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
                return runner.run(main), "uvloop"
    with asyncio.Runner() as runner:
        return runner.run(main), "asyncio"


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    args = parse_args(argv)
    _stub_sniffio()
    raise_fd_limit(4 * args.tables * 2 + 2048)

    def on_term(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)
    servers: list[ServerProcess] = []
    database: PostgresDatabase | None = None
    try:
        if args.url is None:
            extra_env: dict[str, str] = {}
            if args.postgres:
                database = PostgresDatabase()
                print(f"creating database {database.name} ...", file=sys.stderr)
                database.create()
                database.migrate(args.server_log_level)
                extra_env = {"SPADES_DATABASE_URL": database.url, "SPADES_BROKER_URL": REDIS_URL}
                backend = f"PostgreSQL ({database.name}) + Redis ({REDIS_URL})"
            else:
                backend = "SQLite (temporary file)"
            ports: set[int] = set()
            for _ in range(args.processes):
                server = ServerProcess(
                    args.server_log_level, database.url if database else None, extra_env
                )
                servers.append(server)
                for _attempt in range(100):  # distinct free ports, bounded
                    if server.port not in ports:
                        break
                    server.port = free_port()
                ports.add(server.port)
            for server in servers:
                print(f"starting a server on 127.0.0.1:{server.port} ...", file=sys.stderr)
                server.launch()
            start_deadline = time.monotonic() + SERVER_START_TIMEOUT * len(servers)
            for server in servers:
                server.wait_healthy(start_deadline)
            pids = [server.pid for server in servers if server.pid is not None]
            print(f"  server PID{'s' if len(pids) > 1 else ''} {pids}", file=sys.stderr)
            urls = [server.url for server in servers]
        else:
            urls = [args.url]
            pids = [args.server_pid] if args.server_pid is not None else []
            backend = "running server (--url)"
        deadline = SETUP_BUDGET + args.tables * 0.5 + args.warmup + args.duration + DRAIN_TIMEOUT
        result, loop_name = run_loop(
            asyncio.wait_for(run(args, urls, pids, backend), deadline), not args.no_uvloop
        )
        for server in servers:
            if server.process is not None and server.process.poll() is not None:
                result["errors"]["server exited during the run"] = (
                    result["errors"].get("server exited during the run", 0) + 1
                )
        print(report(result, args, loop_name))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
        for server in servers:
            tail = server.tail_log(1500).strip()
            if tail:
                print(f"\nserver log (tail, port {server.port}):\n{tail}", file=sys.stderr)
        return 0
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except (
        ApiError,
        OSError,
        TimeoutError,
        WebSocketException,
        RuntimeError,
        subprocess.SubprocessError,
    ) as exc:
        print(f"load test failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        if isinstance(exc, ApiError) and exc.code == "RATE_LIMITED":
            print("hint: run the server with SPADES_RATE_LIMITS=0 for load tests", file=sys.stderr)
        for server in servers:
            print(
                f"server log (tail, port {server.port}):\n{server.tail_log(1500)}", file=sys.stderr
            )
        return 1
    finally:
        stop_servers(servers)
        if database is not None:
            database.drop()


if __name__ == "__main__":
    raise SystemExit(main())
