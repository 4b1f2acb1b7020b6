"""The Python work of one move's HTTP request, in process: 4 players at one table (no
bots, no subscribers) play through a game over POST /graphql (the load test's own
mutations: `placeBid`/`playCard`/`revealHand` selecting `{ version }`), and this script
counts the Python function calls (every thread) made while the server answers each
move, nothing of the client's. Counts do not depend on the machine's load, unlike
timings (printed too, with the machine's calibration).

    .venv/bin/python scripts/bench_move_request.py                 # calls per move
    .venv/bin/python scripts/bench_move_request.py --profile 30    # + the top 30 functions
    .venv/bin/python scripts/bench_move_request.py --moves 400 --select full

`--select full` asks the whole GameView back instead of `{ version }`."""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import FrameType
from typing import Any

from _measure import calibration

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SEATS = ("NORTH", "EAST", "SOUTH", "WEST")
SIGN_UP = "mutation($u: String!, $p: String!) { signUp(username: $u, password: $p) { token } }"
CREATE_TABLE = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
JOIN_TABLE = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
GAME = (
    "query($t: ID!) { game(tableId: $t) { version phase turn handWithheld "
    "legalPlays { suit rank } } }"
)
FULL = """{ id tableId phase handNumber dealer turn viewerSeat hand { suit rank } handWithheld
  blindNilEligible legalPlays { suit rank }
  seats { id seat playerId username isBot bid { kind tricks } tricksWon cardCount
          awayPlayer { id username } botLevel }
  teams { id team score bags target } currentTrick { seat card { suit rank } }
  lastTrick { plays { seat card { suit rank } } winner } spadesBroken
  history { handNumber team target tricks points bags bagPenalty scoreAfter bagsAfter }
  winner version turnDeadline nextTableId rematchRequests }"""


def moves(select: str) -> dict[str, str]:
    """The move mutations, selecting `select` of the answered GameView."""
    return {
        "bid": "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) "
        + select
        + " }",
        "play": "mutation($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) "
        + select
        + " }",
        "reveal": "mutation($t: ID!) { revealHand(tableId: $t) " + select + " }",
    }


class CallCounter:
    """Counts function calls in every thread while `active` (while the app answers a
    request the benchmark `armed` it for)."""

    def __init__(self) -> None:
        self.armed = False
        self.active = False
        self.calls = 0
        self.other_threads = 0
        self.main = threading.get_ident()

    def __call__(self, _frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and self.active:
            self.calls += 1
            if threading.get_ident() != self.main:
                self.other_threads += 1

    def install(self) -> None:
        """Profile every thread from now on (threads started later too)."""
        threading.setprofile(self)
        sys.setprofile(self)


def counting_app(app: Any, counter: CallCounter, profiler: cProfile.Profile | None) -> Any:
    """The ASGI app, counting the calls made while it answers a request."""

    async def wrapped(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not counter.armed:
            await app(scope, receive, send)
            return
        if profiler is not None:
            sys.setprofile(None)
            profiler.enable()
        counter.active = True
        try:
            await app(scope, receive, send)
        finally:
            counter.active = False
            if profiler is not None:
                profiler.disable()
                sys.setprofile(counter)

    return wrapped


async def run(args: argparse.Namespace) -> None:
    """Set the table up, then count the moves."""
    import httpx

    from app.api.app import create_app
    from app.settings import load_settings

    counter = CallCounter()
    counter.install()  # before any thread starts (aiosqlite's, the writer's)
    app = create_app(load_settings())
    profiler = cProfile.Profile() if args.profile else None
    transport = httpx.ASGITransport(app=counting_app(app, counter, profiler))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://bench") as client,
    ):

        async def call(query: str, variables: dict[str, Any], token: str | None = None) -> Any:
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            body = {"query": query, "variables": variables}
            response = await client.post("/graphql", json=body, headers=headers)
            answer = response.json()
            if answer.get("errors"):
                raise RuntimeError(answer["errors"])
            return answer["data"]

        await count_moves(call, counter, args)
    report(counter, profiler, args)


async def count_moves(
    call: Callable[..., Awaitable[Any]], counter: CallCounter, args: argparse.Namespace
) -> None:
    """Play `args.moves` moves (new tables as games end), counting only the moves."""
    tokens = [
        (await call(SIGN_UP, {"u": f"bench{os.getpid()}x{n}", "p": "bench-password"}))["signUp"][
            "token"
        ]
        for n in range(4)
    ]
    mutations = moves("{ version }" if args.select == "version" else FULL)
    table_id = ""
    done = 0
    started = time.perf_counter()
    spent = 0.0
    while done < args.moves:
        if not table_id:
            table_id = await new_table(call, tokens, done)
        state = (await call(GAME, {"t": table_id}, tokens[0]))["game"]
        if state["phase"] == "GAME_OVER":
            table_id = ""
            continue
        seat = SEATS.index(state["turn"])
        mine = (await call(GAME, {"t": table_id}, tokens[seat]))["game"]
        if state["phase"] == "BIDDING":
            kind = "reveal" if mine["handWithheld"] else "bid"
            variables: dict[str, Any] = {"t": table_id}
        else:
            kind, variables = "play", {"t": table_id, "c": mine["legalPlays"][0]}
        counter.armed = True
        began = time.perf_counter()
        await call(mutations[kind], variables, tokens[seat])
        spent += time.perf_counter() - began
        counter.armed = False
        done += 1
    args.elapsed = time.perf_counter() - started
    args.spent = spent


async def new_table(call: Callable[..., Awaitable[Any]], tokens: list[str], n: int) -> str:
    """A seeded table of the four players (the game starts)."""
    options = {"name": "bench", "seed": 1000 + n}
    table_id: str = (await call(CREATE_TABLE, {"i": options}, tokens[0]))["createTable"]["id"]
    for seat in range(1, 4):
        await call(JOIN_TABLE, {"t": table_id, "s": SEATS[seat]}, tokens[seat])
    return table_id


def report(
    counter: CallCounter, profiler: cProfile.Profile | None, args: argparse.Namespace
) -> None:
    """Calls per move, time per move, and the profile's top functions."""
    print(f"calibration: {calibration()}")
    print(f"moves: {args.moves}, selection: {args.select}")
    print(
        f"server calls per move: {counter.calls / args.moves:,.0f}"
        f" ({counter.other_threads / args.moves:,.0f} in other threads)"
    )
    if profiler is None:
        print(f"wall time per move request: {args.spent / args.moves * 1000:.2f} ms")
        return
    stats = pstats.Stats(profiler)
    if args.dump:
        stats.dump_stats(args.dump)
    print_by_package(stats, args.moves)
    stats.sort_stats(args.sort).print_stats(args.profile)


def package_of(filename: str) -> str:
    """A profile entry's library (or the app's package)."""
    if "site-packages/" in filename:
        return filename.split("site-packages/")[1].split("/")[0]
    if f"{ROOT}/app/" in filename:
        return "app/" + filename.split(f"{ROOT}/app/")[1].split("/")[0]
    if filename.startswith("~") or filename.startswith("<"):
        return "builtins"
    return "stdlib"


def print_by_package(stats: pstats.Stats, moves: int) -> None:
    """Calls per move (coroutine resumptions count as calls) and own time, by library."""
    calls: dict[str, int] = {}
    own: dict[str, float] = {}
    for (filename, _line, _name), row in stats.stats.items():  # type: ignore[attr-defined]
        package = package_of(filename)
        calls[package] = calls.get(package, 0) + row[1]
        own[package] = own.get(package, 0.0) + row[2]
    print(f"{'package':<24} {'calls/move':>10} {'own ms/move':>12}")
    for package in sorted(calls, key=lambda p: -calls[p]):
        print(f"{package:<24} {calls[package] / moves:>10.0f} {own[package] / moves * 1000:>12.3f}")


def main() -> None:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--select", choices=("version", "full"), default="version")
    parser.add_argument("--profile", type=int, default=0, help="print the top N functions")
    parser.add_argument("--sort", default="tottime", help="profile order (tottime, cumtime)")
    parser.add_argument("--dump", help="write the profile (pstats) to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        os.environ.update(
            {
                "SPADES_DATABASE_URL": f"sqlite+aiosqlite:///{folder}/bench.db",
                "SPADES_ARGON2_TIME_COST": "1",
                "SPADES_ARGON2_MEMORY_KIB": "1024",
                "SPADES_ALLOW_SEEDED_TABLES": "1",
                "SPADES_RATE_LIMITS": "0",
                "SPADES_LOG_LEVEL": "warning",
            }
        )
        asyncio.run(run(args))


if __name__ == "__main__":
    main()
