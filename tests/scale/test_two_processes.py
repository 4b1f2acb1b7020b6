"""Two server processes on one PostgreSQL database and one Redis: a game spread over
both, concurrent duplicate moves, version guards, and reconnecting with `since`."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.client import Api
from tests.support.server import ROOT, TEST_ENV, LiveServer
from tests.support.services import redis_url

from .harness import (
    Cluster,
    FastApi,
    Watch,
    assert_consecutive,
    assert_log_complete,
    choose_move,
    error_code,
    logged_moves,
    move_log,
    on,
    send,
    take_turn,
    two_processes,
    watching,
)

# North-South bid 13 (and are set by 130 a hand), East-West bid their spades: with every
# player choosing its first legal card the game is over after about two hands.
BIDS = {"NORTH": 13, "SOUTH": 13, "EAST": None, "WEST": None}

# What the losing copy of a duplicated move may answer when it carries no expectedVersion:
# the winner already changed the game (never an internal error, never a second apply).
REFUSALS = {"NOT_YOUR_TURN", "WRONG_PHASE", "CARD_NOT_IN_HAND"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Processes A and B for the whole module (no test here stops them)."""
    with two_processes(tmp_path_factory.mktemp("pair")) as both:
        yield both


async def seat_four_humans(cluster: Cluster, seed: int) -> tuple[str, dict[str, Api]]:
    """A table whose North and South play on A, East and West on B (not yet seated)."""
    north = await FastApi(cluster.a).sign_up()
    players = {
        "NORTH": north,
        "EAST": await FastApi(cluster.b).sign_up(),
        "SOUTH": await FastApi(cluster.a).sign_up(),
        "WEST": await FastApi(cluster.b).sign_up(),
    }
    table = await north.create_table(name="two processes", seed=seed)
    return str(table["id"]), players


async def join_all(table_id: str, players: dict[str, Api]) -> None:
    for seat in ("EAST", "SOUTH", "WEST"):
        await players[seat].join(table_id, seat)


async def test_four_humans_on_two_processes_play_a_full_game_each_subscriber_sees_every_update_once_in_order(  # noqa: E501
    cluster: Cluster,
) -> None:
    table_id, players = await seat_four_humans(cluster, seed=5)
    spectators = [await FastApi(cluster.a).sign_up(), await FastApi(cluster.b).sign_up()]
    async with AsyncExitStack() as stack:
        # Everyone subscribes on the process they play on before the game starts, plus a
        # spectator on each process.
        own = {
            seat: await stack.enter_async_context(watching(api, table_id))
            for seat, api in players.items()
        }
        watches = [*own.values()] + [
            await stack.enter_async_context(watching(api, table_id)) for api in spectators
        ]
        for watch in watches:
            assert (await watch.next())["event"] == "SNAPSHOT"
        await join_all(table_id, players)

        version = 4  # three seats taken, the game started
        moves = 0
        while True:
            for watch in watches:
                await watch.until(version)
                assert watch.latest["version"] == version
            view = own["NORTH"].latest
            if view["phase"] == "GAME_OVER":
                break
            seat = view["turn"]
            after = await send(players[seat], table_id, choose_move(own[seat].latest, BIDS[seat]))
            assert after["version"] > version
            version = after["version"]
            moves += 1
            assert moves < 400, "the game should have ended by now"

        await asyncio.sleep(0.5)  # anything sent twice would have arrived by now
        for watch in watches:
            assert watch.queue.empty(), "an update arrived after GAME_OVER"

    final = own["NORTH"].latest
    assert final["winner"] in ("NORTH_SOUTH", "EAST_WEST")
    assert final["handNumber"] >= 2
    reference = [(u["event"], u["seat"], u["view"]["version"]) for u in watches[0].updates]
    for watch in watches:
        assert watch.versions == list(range(0, version + 1))  # consecutive, no duplicate
        assert [(u["event"], u["seat"], u["view"]["version"]) for u in watch.updates] == reference
        assert watch.events[-1] == "GAME_OVER"
    for seat, watch in own.items():
        # Each player's updates are projected for its seat: its own cards only.
        for update in watch.updates[5:]:
            view = update["view"]
            assert view["viewerSeat"] == seat
            mine = next(s for s in view["seats"] if s["seat"] == seat)
            if view["handWithheld"]:  # offered blind nil: not even its own cards yet
                assert view["hand"] is None
            else:
                assert len(view["hand"]) == mine["cardCount"]
    for watch in watches[4:]:
        assert all(u["view"]["hand"] is None for u in watch.updates)
    rows, stored = await move_log(cluster.database_url, table_id)
    assert stored == version
    assert_log_complete(rows, stored)


async def test_the_same_move_sent_to_both_processes_at_once_applies_exactly_once(
    cluster: Cluster,
) -> None:
    table_id, players = await seat_four_humans(cluster, seed=6)
    await join_all(table_id, players)
    watcher = await FastApi(cluster.b).sign_up()
    rounds = 16  # the four bids and three tricks
    async with watching(watcher, table_id) as watch:
        view = await players["NORTH"].game(table_id)
        for number in range(rounds):
            seat = view["turn"]
            mover = players[seat]
            own_view = await mover.game(table_id)
            move = choose_move(own_view)
            guard = own_view["version"] if number % 2 else None
            results = await asyncio.gather(
                send(on(mover, cluster.a), table_id, move, guard),
                send(on(mover, cluster.b), table_id, move, guard),
                return_exceptions=True,
            )
            applied = [r for r in results if isinstance(r, dict)]
            refused = [r for r in results if not isinstance(r, dict)]
            assert len(applied) == 1 and len(refused) == 1, results
            code = getattr(refused[0], "code", repr(refused[0]))
            if guard is None:
                assert code in REFUSALS, code
            else:
                assert code == "CONFLICT", code
            view = await players["NORTH"].game(table_id)
            assert view["version"] == applied[0]["version"]  # applied once, not twice
        await watch.until(view["version"])

    assert_consecutive(watch)
    assert "SNAPSHOT" not in watch.events[1:]
    assert len(set(watch.versions)) == len(watch.versions)
    entries = await logged_moves(cluster.database_url, table_id)
    game_moves = [e for e in entries if e["type"] in ("bid", "play")]
    assert len(game_moves) == rounds
    rows, version = await move_log(cluster.database_url, table_id)
    assert version == view["version"]
    assert_log_complete(rows, version)


async def test_a_move_with_a_stale_expected_version_is_refused_with_conflict_and_changes_nothing(
    cluster: Cluster,
) -> None:
    table_id, players = await seat_four_humans(cluster, seed=8)
    await join_all(table_id, players)
    first = await players["NORTH"].game(table_id)
    seat = first["turn"]
    mover = players[seat]
    before = await mover.game(table_id)
    # The turn's owner moves on process B...
    after = await send(on(mover, cluster.b), table_id, choose_move(before), before["version"])
    assert after["version"] == before["version"] + 1
    # ...and the next seat's move, decided on a stale version, is refused on A.
    nxt = players[after["turn"]]
    current = await nxt.game(table_id)
    stale = before["version"]
    code = await error_code(send(on(nxt, cluster.a), table_id, choose_move(current), stale))
    assert code == "CONFLICT"
    assert await nxt.game(table_id) == current
    # A future version is no better.
    code = await error_code(
        send(on(nxt, cluster.a), table_id, choose_move(current), current["version"] + 5)
    )
    assert code == "CONFLICT"
    assert await nxt.game(table_id) == current
    # The current version goes through, on either process.
    done = await send(on(nxt, cluster.a), table_id, choose_move(current), current["version"])
    assert done["version"] == current["version"] + 1


async def test_reconnecting_to_the_other_process_with_since_gets_exactly_the_missed_updates_then_live_ones(  # noqa: E501
    cluster: Cluster,
) -> None:
    alice = await FastApi(cluster.a).sign_up()
    alice_b = on(alice, cluster.b)
    table = await alice.create_table(name="since", seed=9)
    table_id = str(table["id"])
    # Alice's reference subscription on A sees everything; her moves go through B.
    async with watching(alice, table_id) as reference:
        await reference.next()
        for seat in ("EAST", "SOUTH", "WEST"):
            await alice.add_bot(table_id, seat)

        # A second connection, on A, follows a few moves, then drops.
        async with watching(alice, table_id) as first:
            for _ in range(3):
                await take_turn(alice_b, table_id, reference, "NORTH")
            seen = (await reference.until_turn("NORTH"))["version"]
            await first.until(seen)
            assert first.versions[-1] == seen
            assert_consecutive(first)
        # Moves happen while it is away, through the end of the hand and into the next.
        hand = reference.latest["handNumber"]
        while (await reference.until_turn("NORTH"))["handNumber"] == hand:
            await take_turn(alice_b, table_id, reference, "NORTH")
        missed_up_to = reference.latest["version"]
        assert missed_up_to > seen + 4

        # Reconnecting to B with since: exactly the missed updates, as they were live.
        async with watching(alice_b, table_id, since=seen) as resumed:
            await resumed.until(missed_up_to)
            assert resumed.versions == list(range(seen + 1, missed_up_to + 1))
            live = {u["view"]["version"]: u for u in reference.updates}
            for update in resumed.updates:
                assert update == live[update["view"]["version"]]
            # Then live ones, still one at a time.
            after = await take_turn(alice, table_id, reference, "NORTH")
            assert after is not None
            await resumed.until(after["version"])
            assert resumed.versions == list(range(seen + 1, resumed.latest["version"] + 1))
            assert resumed.updates[-1] == await live_update(reference, resumed.latest["version"])

        # Without since: a fresh snapshot of the current state, then live updates.
        now = await reference.until_turn("NORTH")
        async with watching(alice_b, table_id) as fresh:
            snapshot = await fresh.next()
            assert snapshot["event"] == "SNAPSHOT"
            assert snapshot["view"] == now
            after = await take_turn(alice, table_id, reference, "NORTH")
            assert after is not None
            update = await fresh.next()
            assert update == await live_update(reference, now["version"] + 1)

        # A version this table never had cannot be resumed from: a SNAPSHOT instead.
        now = await reference.until_turn("NORTH")
        async with watching(alice_b, table_id, since=now["version"] + 50) as confused:
            snapshot = await confused.next()
            assert snapshot["event"] == "SNAPSHOT"
            assert snapshot["view"] == now


async def live_update(watch: Watch, version: int) -> dict[str, Any]:
    """The update of `version` as `watch` received it live."""
    await watch.until(version)
    return next(u for u in watch.updates if u["view"]["version"] == version)


class WorkersServer(LiveServer):
    """`spades serve --workers N`: one port, N worker processes."""

    def __init__(self, database: Path, workers: int, **kwargs: Any) -> None:
        super().__init__(database, **kwargs)
        self.workers = workers

    def start(self, timeout: float = 40.0) -> None:
        env = {**os.environ, **TEST_ENV, **self.extra_env}
        command = [sys.executable, "-c", "from app.cli import main; main()", "serve"]
        command += ["--port", str(self.port), "--database-url", self.database_url]
        command += ["--workers", str(self.workers)]
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child process owns it
        self.process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, self.logs()[-2000:]
            try:
                url = f"http://127.0.0.1:{self.port}/healthz"
                if len(self.children()) == self.workers and httpx.get(url).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError("server did not start in time")

    def children(self) -> list[int]:
        """The process ids of the workers (multiprocessing also runs a resource tracker)."""
        assert self.process is not None
        path = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        pids = [int(p) for p in path.read_text().split()] if path.exists() else []
        return [pid for pid in pids if b"spawn_main" in _cmdline(pid)]

    def stop(self, kill: bool = False) -> None:
        """Stop the server and make sure no worker outlives it."""
        if self.process is None:
            return
        leftovers = self.children()
        super().stop(kill=kill)
        for pid in leftovers:
            if b"spawn_main" in _cmdline(pid):  # still there (not a reused pid)
                os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


async def test_serve_with_two_workers_on_one_port_plays_a_hand_seen_whole_by_every_subscriber(
    pg_url: str, tmp_path: Path
) -> None:
    server = WorkersServer(
        tmp_path / "workers.db",
        workers=2,
        env={"SPADES_BROKER_URL": redis_url()},
        database_url=pg_url,
    )
    try:
        server.start()
        alice = await FastApi(server).sign_up()
        table_id = str((await alice.create_table(name="workers", seed=31))["id"])
        watchers = [await FastApi(server).sign_up() for _ in range(4)]
        async with AsyncExitStack() as stack:
            # Each connection lands on whichever worker accepts it.
            mine = await stack.enter_async_context(watching(alice, table_id))
            others = [await stack.enter_async_context(watching(api, table_id)) for api in watchers]
            for seat in ("EAST", "SOUTH", "WEST"):
                await alice.add_bot(table_id, seat)
            while (view := await mine.until_turn("NORTH"))["handNumber"] == 1:
                await take_turn(alice, table_id, mine, "NORTH")
            for watch in others:
                await watch.until(view["version"])
        for watch in [mine, *others]:
            assert watch.events[0] == "SNAPSHOT"
            assert_consecutive(watch)
            assert "SNAPSHOT" not in watch.events[1:]
        assert len(server.children()) == 2
    finally:
        server.stop()
