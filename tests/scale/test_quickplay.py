"""Quick play across two server processes on one PostgreSQL database and one Redis
(docs/rules.md, Quick play): one table for players of both processes, the same ticket
from a second start anywhere, watching on one process keeps a ticket the other expires,
cancels racing matches, and the matchmaking taken over when its process dies, with every
ticket matched once and nobody seated twice."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from tests.support.quickplay import (
    TRANSPORT,
    cancel,
    cancel_all,
    humans,
    latest,
    searching,
    start,
    statuses,
    until_status,
    updates,
)

from .harness import Cluster, FastApi, on, two_processes

QUICK = {"SPADES_QUICKPLAY_WAVE_SECONDS": "0.3"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Processes A (started first: it takes the matchmaking lease) and B."""
    with two_processes(Path(tmp_path_factory.mktemp("quickplay")), QUICK) as both:
        yield both


async def sign_up(cluster: Cluster, count: int) -> list[FastApi]:
    """`count` players, every other one signed up on B."""
    made = []
    for index in range(count):
        player = FastApi(cluster.b if index % 2 else cluster.a)
        await player.sign_up()
        made.append(player)
    return made


@pytest.fixture
async def eight(cluster: Cluster) -> AsyncIterator[list[FastApi]]:
    """Eight players (alternately on A and B); their searches cancelled afterwards."""
    players = await sign_up(cluster, 8)
    yield players
    await cancel_all(players)


def tables_of(tickets: list[dict[str, Any] | None]) -> dict[str, list[str]]:
    """The humans of each table the tickets were matched to."""
    return {
        t["table"]["id"]: humans(t["table"])
        for t in tickets
        if t is not None and t["status"] == "MATCHED"
    }


def assert_nobody_seated_twice(tables: dict[str, list[str]]) -> None:
    """No player at two tables, four humans at each."""
    seated = Counter(p for players in tables.values() for p in players)
    assert all(count == 1 for count in seated.values()), seated
    assert all(len(players) == 4 for players in tables.values())


async def test_players_of_both_processes_meet_at_one_table_and_each_hears_it(
    cluster: Cluster, eight: list[FastApi]
) -> None:
    four = eight[:4]  # A, B, A, B
    before = await searching(four[0])
    async with AsyncExitStack() as stack:
        streams = [
            await stack.enter_async_context(updates(p, TRANSPORT if i % 2 else "graphql-ws"))
            for i, p in enumerate(four)
        ]
        for player in four[:3]:
            await start(player, rated=True)
        # Counted on every process.
        assert await searching(on(four[0], cluster.b)) == before + 3
        assert await searching(on(four[1], cluster.a)) == before + 3
        await start(four[3], rated=True)
        heard = [await s.until(lambda t: t["status"] == "MATCHED") for s in streams]
    assert len({t["table"]["id"] for t in heard}) == 1
    assert set(humans(heard[0]["table"])) == {p.player_id for p in four}


async def test_a_second_start_on_the_other_process_answers_the_same_ticket(
    cluster: Cluster, eight: list[FastApi]
) -> None:
    for player in eight[:4]:
        here, there = player, on(player, cluster.b if player.server is cluster.a else cluster.a)
        first, second = await asyncio.gather(start(here, rated=True), start(there, rated=False))
        # One ticket, whichever start made it (and so whichever `rated`).
        assert first == second == await latest(player)


async def test_a_ticket_watched_on_one_process_is_kept_while_an_unwatched_one_expires(
    cluster: Cluster, eight: list[FastApi]
) -> None:
    watched, unwatched = eight[0], eight[2]  # both signed up on A
    began = time.monotonic()
    async with updates(on(watched, cluster.b)):  # watched on B, started on A
        await start(watched, rated=True)
        await start(unwatched, rated=True)
        await asyncio.sleep(max(0.0, began + 12.0 - time.monotonic()))
        assert await statuses([watched, unwatched]) == ["SEARCHING", "EXPIRED"]


async def test_cancels_racing_matches_on_the_other_process_each_win_or_lose_whole(
    cluster: Cluster, eight: list[FastApi]
) -> None:
    answers: list[dict[str, Any] | None] = []
    for _round in range(3):
        await asyncio.gather(*(start(p, rated=True) for p in eight))
        # Each player's cancel, on the process they did not start on, races the waves.
        others = [on(p, cluster.b if p.server is cluster.a else cluster.a) for p in eight]
        answers = list(await asyncio.gather(*(cancel(p) for p in others)))
        await asyncio.sleep(1.0)
        final = [await latest(p) for p in eight]
        for answer, ticket in zip(answers, final, strict=True):
            assert answer is not None and ticket is not None
            assert answer["status"] in ("CANCELLED", "MATCHED")
            assert (answer["id"], answer["status"]) == (ticket["id"], ticket["status"])
        tables = tables_of(final)
        assert_nobody_seated_twice(tables)
        seated = {p for players in tables.values() for p in players}
        for player, ticket in zip(eight, final, strict=True):
            assert (ticket is not None and ticket["status"] == "MATCHED") == (
                player.player_id in seated
            )
        for table_id, players in tables.items():
            for player in eight:
                if player.player_id in players:
                    await player.call("mutation($t: ID!) { leaveTable(tableId: $t) }", t=table_id)


async def test_when_the_matchmaking_process_dies_the_other_takes_over_and_no_ticket_is_lost(
    cluster: Cluster,
) -> None:
    players = await sign_up(cluster, 16)
    # Everyone watches on B, the process that survives.
    watching = [on(p, cluster.b) for p in players]
    async with AsyncExitStack() as stack:
        for player in watching:
            await stack.enter_async_context(updates(player))
        starts = [start(p, rated=True) for p in players[:12]]
        await asyncio.gather(*starts)
        cluster.a.stop(kill=True)  # the lease holder, possibly in the middle of a wave
        killed = time.monotonic()
        await asyncio.gather(*(start(p, rated=True) for p in watching[12:]))
        final = [await until_status(p, "MATCHED", timeout=20) for p in watching]
        taken_over = time.monotonic() - killed
    tables = tables_of(list(final))
    assert_nobody_seated_twice(tables)
    assert len(tables) == 4
    assert taken_over < 10
    cluster.a.start()  # back for whatever runs next
