"""The quick-play load (scenario `quickplay-400`): P players spread over the server
processes, each with its own WebSocket subscribed to `quickPlayUpdates`
(`graphql-transport-ws`), all press Play (unrated) within `--spread` seconds.

Before the starts every player gets a rating (normal around 1500, sd 150, seeded; written
into the database as rated games would), so that the matchmaker has ratings to choose
between. Measured: the time from each `startQuickPlay` request to the player's MATCHED
update, the tables formed (and how many got bots), players seated at two tables (from the
MATCHED updates and, on PostgreSQL, from the database's seats: must be 0), the mean
rating spread (highest minus lowest human) per table, and the servers' CPU."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import secrets
import sqlite3
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException
from websockets.typing import Subprotocol

from .harness import PASSWORD, Api, bounded_gather, ws_url_of
from .measure import percentile, read_cpu_seconds

SIGN_UP = (
    "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) "
    "{ token player { id } } }"
)
START = "mutation { startQuickPlay { id status } }"
UPDATES = "subscription { quickPlayUpdates { id status table { id seats { playerId isBot } } } }"
MATCH_TIMEOUT = 90.0  # unrated tickets get bots after 15 s: everyone is seated long before
RATING_SD = 150


@dataclass
class QuickPlayer:
    """One player: their process, token, rating, socket, and when they started and matched."""

    index: int
    api: Api
    ws_url: str
    username: str
    token: str = ""
    player_id: str = ""
    rating: int = 1500
    ws: ClientConnection | None = None
    reader: asyncio.Task[None] | None = None
    acked: asyncio.Event = field(default_factory=asyncio.Event)
    matched: asyncio.Event = field(default_factory=asyncio.Event)
    started_at: float = 0.0
    matched_at: float = 0.0
    tables: list[dict[str, Any]] = field(default_factory=list)  # every MATCHED table heard
    errors: Counter[str] = field(default_factory=Counter)

    async def sign_up(self) -> None:
        data = await self.api.call(SIGN_UP, {"u": self.username, "p": PASSWORD})
        self.token = data["signUp"]["token"]
        self.player_id = data["signUp"]["player"]["id"]

    async def open(self) -> None:
        """Connect, init, subscribe to quickPlayUpdates."""
        self.ws = await connect(
            self.ws_url,
            subprotocols=[Subprotocol("graphql-transport-ws")],
            compression=None,
            proxy=None,
            open_timeout=30,
            ping_interval=None,
            close_timeout=2,
        )
        self.reader = asyncio.create_task(self._read())
        init = {"type": "connection_init", "payload": {"Authorization": f"Bearer {self.token}"}}
        await self.ws.send(json.dumps(init))
        await asyncio.wait_for(self.acked.wait(), 30)
        message = {"type": "subscribe", "id": "q", "payload": {"query": UPDATES}}
        await self.ws.send(json.dumps(message))

    async def start(self, at: float) -> None:
        """Press Play at `at` (perf_counter)."""
        await asyncio.sleep(max(0.0, at - time.perf_counter()))
        self.started_at = time.perf_counter()
        await self.api.call(START, {}, self.token)

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for raw in self.ws:
                now = time.perf_counter()
                message = json.loads(raw)
                kind = message.get("type")
                if kind == "connection_ack":
                    self.acked.set()
                elif kind == "ping":
                    await self.ws.send('{"type":"pong"}')
                elif kind == "next":
                    ticket = ((message.get("payload") or {}).get("data") or {}).get(
                        "quickPlayUpdates"
                    )
                    if ticket is None:
                        self.errors["subscription error"] += 1
                    elif ticket["status"] == "MATCHED" and self.started_at:
                        self.tables.append(ticket["table"])
                        if not self.matched.is_set():
                            self.matched_at = now
                            self.matched.set()
                elif kind in ("error", "complete"):
                    self.errors[f"subscription {kind}"] += 1
        except (ConnectionClosed, WebSocketException, ValueError):
            self.errors["websocket closed"] += 1

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.reader is not None:
            self.reader.cancel()
            await asyncio.gather(self.reader, return_exceptions=True)


async def run_quickplay(
    args: argparse.Namespace,
    urls: list[str],
    pids: list[int],
    backend: str,
    database_url: str,
) -> dict[str, Any]:
    """Sign up, rate, connect, start within the spread, wait for every MATCHED; the figures."""
    count = args.players
    run_id = secrets.token_hex(3)
    apis = [Api(url, pool=16) for url in urls]
    players = [
        QuickPlayer(i, apis[i % len(urls)], ws_url_of(urls[i % len(urls)]), f"q{run_id}x{i}")
        for i in range(count)
    ]
    rng = random.Random(count)
    for player in players:
        player.rating = round(rng.gauss(1500, RATING_SD))
    try:
        concurrency, quiet = args.setup_concurrency, args.quiet
        await bounded_gather([p.sign_up for p in players], concurrency, "sign-ups", quiet)
        await write_ratings(database_url, {p.player_id: p.rating for p in players})
        await bounded_gather([p.open for p in players], concurrency, "sockets", quiet)
        await asyncio.sleep(1.0)
        cpu_before = [read_cpu_seconds(pid) for pid in pids]
        began = time.perf_counter() + 0.2
        moments = [began + args.spread * i / max(1, count - 1) for i in range(count)]
        rng.shuffle(moments)
        starts = [asyncio.create_task(p.start(at)) for p, at in zip(players, moments, strict=True)]
        start_errors = Counter(
            type(r).__name__ for r in await asyncio.gather(*starts, return_exceptions=True) if r
        )
        last_start = max(p.started_at for p in players)
        waiting = [asyncio.create_task(p.matched.wait()) for p in players]
        _done, pending = await asyncio.wait(waiting, timeout=MATCH_TIMEOUT)
        for task in pending:
            task.cancel()
        ended = time.perf_counter()
        cpu_after = [read_cpu_seconds(pid) for pid in pids]
        seated_twice_db = await seated_twice_in_database(database_url)
    finally:
        await asyncio.gather(*(p.close() for p in players), return_exceptions=True)
        await asyncio.gather(*(a.close() for a in apis), return_exceptions=True)
    return figures(
        players, backend, len(urls), pids, start_errors, last_start - began, ended - began,
        cpu_before, cpu_after, seated_twice_db,
    )  # fmt: skip


def figures(
    players: list[QuickPlayer],
    backend: str,
    processes: int,
    pids: list[int],
    start_errors: Counter[str],
    start_window: float,
    elapsed: float,
    cpu_before: list[float | None],
    cpu_after: list[float | None],
    seated_twice_db: int | None,
) -> dict[str, Any]:
    """The run's figures from what the players heard."""
    waits = sorted(p.matched_at - p.started_at for p in players if p.matched.is_set())
    tables: dict[str, dict[str, Any]] = {}
    for player in players:
        for table in player.tables:
            tables[table["id"]] = table
    seats = Counter(s["playerId"] for t in tables.values() for s in t["seats"] if not s["isBot"])
    rating = {p.player_id: p.rating for p in players}
    spreads = []
    for table in tables.values():
        values = [rating[s["playerId"]] for s in table["seats"] if not s["isBot"]]
        spreads.append(max(values) - min(values))
    full = [s for t, s in zip(tables.values(), spreads, strict=True) if bots_at(t) == 0]
    cpu = [
        (after - before) if before is not None and after is not None else None
        for before, after in zip(cpu_before, cpu_after, strict=True)
    ]
    errors: Counter[str] = Counter(start_errors)
    for player in players:
        errors.update(player.errors)
    return {
        "scenario": "quickplay",
        "backend": backend,
        "server_processes": processes,
        "server_pids": pids,
        "players": len(players),
        "start_window_s": start_window,
        "matched": len(waits),
        "unmatched": len(players) - len(waits),
        "time_to_matched_ms": {
            "p50": percentile(waits, 50) * 1000,
            "p95": percentile(waits, 95) * 1000,
            "p99": percentile(waits, 99) * 1000,
            "max": waits[-1] * 1000 if waits else math.nan,
        },
        "tables": len(tables),
        "tables_with_bots": sum(1 for t in tables.values() if bots_at(t)),
        "seated_twice": sum(1 for n in seats.values() if n > 1),
        "seated_twice_in_database": seated_twice_db,
        "mean_rating_spread": sum(spreads) / len(spreads) if spreads else math.nan,
        "mean_rating_spread_four_humans": sum(full) / len(full) if full else math.nan,
        "server_cpu_s": cpu,
        "elapsed_s": elapsed,
        "errors": dict(errors),
    }


def bots_at(table: dict[str, Any]) -> int:
    """How many bots sit at a table."""
    return sum(1 for s in table["seats"] if s["isBot"])


async def write_ratings(database_url: str, ratings: dict[str, int]) -> None:
    """Give every player a shown rating (their `ratings` row, as rated games would)."""
    rows = [(p, value, 25.0 + (value - 1500) / 42, -value) for p, value in ratings.items()]
    insert = (
        "INSERT INTO ratings (player_id, username_key, mu, sigma, value, deviation, games, seq, "
        "listed, board_value, board_games) SELECT id, username_key, {mu}, 5.0, {value}, 210, 10, "
        "0, {listed}, {board}, -10 FROM players WHERE id = {id}"
    )
    if database_url.startswith("sqlite"):
        path = database_url.split("///", 1)[1]
        sql = insert.format(mu="?", value="?", listed="1", board="?", id="?")
        with sqlite3.connect(path, timeout=30) as connection:
            connection.executemany(sql, [(m, v, b, p) for p, v, m, b in rows])
        return
    import asyncpg  # type: ignore[import-untyped]

    connection = await asyncpg.connect(database_url.replace("+asyncpg", ""))
    try:
        sql = insert.format(mu="$2", value="$3", listed="true", board="$4", id="$1")
        await connection.executemany(sql, [(p, m, v, b) for p, v, m, b in rows])
    finally:
        await connection.close()


async def seated_twice_in_database(database_url: str) -> int | None:
    """Humans holding a seat at two unfinished tables, per the database (PostgreSQL; None
    on SQLite, or when PostgreSQL has no connection to spare for a while)."""
    if database_url.startswith("sqlite"):
        return None
    import asyncpg

    connection = None
    for attempt in range(20):  # a shared server may be at max_connections for a moment
        try:
            connection = await asyncpg.connect(database_url.replace("+asyncpg", ""))
            break
        except asyncpg.exceptions.TooManyConnectionsError:
            await asyncio.sleep(0.5 * (attempt + 1))
    if connection is None:
        return None
    try:
        return int(
            await connection.fetchval(
                "SELECT count(*) FROM (SELECT s.player_id FROM seats s JOIN tables t "
                "ON t.id = s.table_id WHERE t.status IN ('WAITING', 'PLAYING') "
                "AND s.player_id NOT LIKE 'bot:%' GROUP BY s.player_id HAVING count(*) > 1) x"
            )
        )
    finally:
        await connection.close()


def report_quickplay(result: dict[str, Any], calibration: float) -> str:
    """The figures as printed."""
    waits = result["time_to_matched_ms"]
    cpu = ", ".join(f"{c:.1f}" if c is not None else "?" for c in result["server_cpu_s"])
    lines = [
        f"quick play:         {result['players']} players over {result['server_processes']} "
        f"process(es), {result['backend']}",
        f"calibration:        {calibration:.1f} µs per loop (sum(range(10000)))",
        f"starts:             within {result['start_window_s']:.2f} s",
        f"matched:            {result['matched']} (unmatched {result['unmatched']})",
        f"time to MATCHED:    p50 {waits['p50']:.0f} ms, p95 {waits['p95']:.0f} ms, "
        f"p99 {waits['p99']:.0f} ms, max {waits['max']:.0f} ms",
        f"tables formed:      {result['tables']} ({result['tables_with_bots']} with bots)",
        f"seated twice:       {result['seated_twice']} (database: "
        f"{result['seated_twice_in_database']})",
        f"rating spread:      mean {result['mean_rating_spread']:.0f} per table "
        f"({result['mean_rating_spread_four_humans']:.0f} at tables of four humans)",
        f"server CPU:         {cpu} s per process over {result['elapsed_s']:.1f} s",
        f"errors:             {result['errors'] or 'none'}",
    ]
    return "\n".join(lines)
