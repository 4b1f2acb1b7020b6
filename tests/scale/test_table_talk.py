"""Chat and rematch on two server processes sharing PostgreSQL and Redis: messages reach
readers on both processes, the chat limit counts a player's messages on every process,
the last hundred messages of a channel are kept in PostgreSQL, and the last two rematch
requests sent at once to the two processes open exactly one rematch table."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import AsyncExitStack

import asyncpg  # type: ignore[import-untyped]
import pytest

from tests.support.social import Social, befriend
from tests.support.table_talk import (
    chat,
    chat_refusal,
    chat_stream,
    make_live,
    play_to_game_over,
    request_rematch,
    send_chat,
    table,
)

from .harness import (
    Cluster,
    FastApi,
    assert_log_complete,
    logged_moves,
    move_log,
    on,
    plain_url,
    two_processes,
)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Processes A and B on a fresh PostgreSQL database and the shared Redis."""
    with two_processes(tmp_path_factory.mktemp("talk")) as both:
        yield both


async def rematches_of(database_url: str, table_id: str) -> list[str]:
    """Ids of the stored tables that are a rematch of `table_id`."""
    connection = await asyncpg.connect(plain_url(database_url))
    try:
        rows = await connection.fetch("SELECT id FROM tables WHERE rematch_of = $1", table_id)
    finally:
        await connection.close()
    return [r["id"] for r in rows]


async def spectators(database_url: str, table_id: str) -> dict[str, bool]:
    """The stored spectators of a table: player id -> kept (from the table it replaced)."""
    connection = await asyncpg.connect(plain_url(database_url))
    try:
        rows = await connection.fetch(
            "SELECT player_id, kept FROM spectators WHERE table_id = $1", table_id
        )
    finally:
        await connection.close()
    return {r["player_id"]: r["kept"] for r in rows}


class FastSocial(FastApi, Social):
    """A player with the social operations, over plain httpx."""


WATCH = "mutation($t: ID!) { watchTable(tableId: $t) { id } }"


async def test_chat_reaches_readers_on_both_processes_and_the_limit_counts_everywhere(
    pair: Cluster,
) -> None:
    host = await FastApi(pair.a).sign_up()
    on_a, on_b = await FastApi(pair.a).sign_up(), await FastApi(pair.b).sign_up()
    table_id = (await host.create_table(name="talk"))["id"]
    async with AsyncExitStack() as stack:
        streams = {
            "a": await stack.enter_async_context(chat_stream(on_a, table_id)),
            "b": await stack.enter_async_context(chat_stream(on_b, table_id)),
        }
        await make_live(streams, host, table_id, "PLAYERS")
        await send_chat(host, table_id, "PLAYERS", "hello from A")
        await send_chat(on_b, table_id, "SPECTATORS", "hello from B")
        for stream in streams.values():
            assert await stream.until("hello from B") == ["hello from A", "hello from B"]
    assert await chat(on_b, table_id, "SPECTATORS") == ["hello from B"]
    assert await chat(on(on_b, pair.a), table_id, "SPECTATORS") == ["hello from B"]

    # Five messages of one player, spread over both processes, fill the player's window.
    talker = await FastApi(pair.a).sign_up()
    for number in range(5):
        api = talker if number % 2 else on(talker, pair.b)
        await send_chat(api, table_id, "SPECTATORS", f"spread {number}")
    for api in (talker, on(talker, pair.b)):
        try:
            refused = await chat_refusal(api, table_id, "SPECTATORS", "one more")
        except AssertionError as accepted:
            # Seen once under load: say whether a process counted on its own (its limiter
            # could not reach Redis in time and logged it).
            logs = f"A:\n{pair.a.logs()[-3000:]}\nB:\n{pair.b.logs()[-3000:]}"
            raise AssertionError(f"{accepted}\n{logs}") from None
        assert refused.code == "RATE_LIMITED"


async def test_the_last_hundred_messages_of_a_channel_are_kept_in_postgresql(
    pair: Cluster,
) -> None:
    host = await FastApi(pair.a).sign_up()
    table_id = (await host.create_table(name="long talk"))["id"]
    sent: list[str] = []
    for number in range(21):  # five each: the chat limit
        talker = await FastApi(pair.a if number % 2 else pair.b).sign_up()
        for k in range(5):
            sent.append(f"talker {number} message {k}")
            await send_chat(talker, table_id, "SPECTATORS", sent[-1])
    await send_chat(host, table_id, "PLAYERS", "a channel of its own")
    # Either process serves the kept messages from the database, oldest first (to a
    # spectator: seated players read that channel once the game is over).
    assert await chat(talker, table_id, "SPECTATORS", last=100) == sent[5:]
    assert await chat(on(talker, pair.b), table_id, "SPECTATORS", last=100) == sent[5:]
    assert await chat(on(host, pair.b), table_id, "PLAYERS") == ["a channel of its own"]
    connection = await asyncpg.connect(plain_url(pair.database_url))
    try:
        rows = await connection.fetch(
            "SELECT channel, count(*) AS n FROM chat_messages WHERE table_id = $1 GROUP BY channel",
            table_id,
        )
    finally:
        await connection.close()
    assert {r["channel"]: r["n"] for r in rows} == {"PLAYERS": 1, "SPECTATORS": 100}


async def test_the_last_two_rematch_requests_at_once_on_two_processes_open_one_table(
    pair: Cluster,
) -> None:
    north = await FastSocial(pair.a).sign_up()
    south = await FastSocial(pair.b).sign_up()
    fan = await FastSocial(pair.b).sign_up()
    for friend in (south, fan):
        await befriend(north, friend)
    table_id = (await north.create_table(name="race", seed=12, visibility="FRIENDS_ONLY"))["id"]
    await south.join(table_id, "SOUTH")
    # A spectator (watching twice changes nothing): kept at each rematch table.
    await fan.watch(table_id)
    await on(fan, pair.a).call(WATCH, t=table_id)
    await north.add_bot(table_id, "EAST")
    await north.add_bot(table_id, "WEST")
    # Twice: the first game's race opens a rematch table, whose own game races again.
    for _race in range(2):
        over = await play_to_game_over({"NORTH": north, "SOUTH": south}, table_id)
        answers = await asyncio.gather(
            request_rematch(north, table_id), request_rematch(south, table_id)
        )
        opened = await rematches_of(pair.database_url, table_id)
        assert len(opened) == 1, opened
        new_id = opened[0]
        assert {a["id"] for a in answers} <= {table_id, new_id}
        assert new_id in {a["id"] for a in answers}
        entries = [e["type"] for e in await logged_moves(pair.database_url, table_id)]
        assert entries.count("rematch") == 2 and entries.count("rematch_started") == 1
        rows, version = await move_log(pair.database_url, table_id)
        assert version == over["version"] + 3
        assert_log_complete(rows, version)
        for player in (north, south, on(north, pair.b), on(south, pair.a)):
            assert (await table(player, table_id))["game"]["nextTableId"] == new_id
        assert (await table(south, new_id))["rematchOf"] == table_id
        assert await spectators(pair.database_url, new_id) == {fan.pid: True}
        assert (await table(fan, new_id))["rematchOf"] == table_id
        table_id = new_id
