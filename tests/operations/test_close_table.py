"""`spades admin close-table`: an operator closes a table from outside the servers, and it
closes as the rules close a table, at once, for everyone: TABLE_CLOSED is the last update
of every subscriber (players and spectators, on any process), the table leaves the
lobby, and every move is refused. Its reason stays in the move log."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.cli import main
from tests.scale.harness import on, two_processes
from tests.support.client import Api, next_update
from tests.support.play import lobby_ids
from tests.support.scenarios import GAME_UPDATES, SeatedTable, seat_four_humans
from tests.support.server import LiveServer
from tests.support.social import Beacon, Social, lobby_stream

from .support import audit, spades_async, sqlite_url

REASON = "abusive table name"


async def until_closed(queue: asyncio.Queue[Any], timeout: float = 15.0) -> dict[str, Any]:
    """The subscriber's updates up to TABLE_CLOSED, which must come within `timeout`."""
    while True:
        update = dict((await next_update(queue, timeout))["gameUpdates"])
        if update["event"] == "TABLE_CLOSED":
            return update


async def refused_move(table: SeatedTable, player: Api | None = None) -> str | None:
    """The error code of a bid by the seat on turn (at the given server's api)."""
    view = await table.view()
    own = player or table.players[view["turn"]]
    return await own.error(
        "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) { version } }",
        t=table.table_id,
    )


def last_log_entry(database: Path, table_id: str) -> dict[str, Any]:
    connection = sqlite3.connect(database)
    try:
        (move,) = connection.execute(
            "SELECT move FROM moves WHERE table_id = ? ORDER BY seq DESC LIMIT 1", (table_id,)
        ).fetchone()
    finally:
        connection.close()
    return dict(json.loads(move))


async def close_alone(server: LiveServer) -> None:
    table = await seat_four_humans(server, seed=21)
    spectator = await Social.signed_up(server)
    await spectator.watch(table.table_id)
    outsider = await Social.signed_up(server)
    beacon = await Beacon.create(server)
    seated = table.players["NORTH"]
    async with (
        seated.subscribe(GAME_UPDATES, t=table.table_id) as players_view,
        spectator.subscribe(GAME_UPDATES, t=table.table_id) as spectators_view,
        lobby_stream(outsider, beacon) as lobby,
    ):
        for queue in (players_view, spectators_view):
            assert (await next_update(queue))["gameUpdates"]["event"] == "SNAPSHOT"
        ran = await spades_async(
            "admin",
            "close-table",
            table.table_id,
            "--reason",
            REASON,
            "--database-url",
            sqlite_url(server.database),
        )
        assert ran.code == 0, ran.err
        for queue in (players_view, spectators_view):
            closed = await until_closed(queue)
            assert closed["view"]["phase"] == "BIDDING"  # the game stops where it stood
        assert await lobby.events_for(table.table_id) == ["TABLE_REMOVED"]
    assert await refused_move(table) == "WRONG_PHASE"
    assert table.table_id not in await lobby_ids(outsider)
    assert last_log_entry(server.database, table.table_id) == {"type": "close", "reason": REASON}

    again = await spades_async(
        "admin", "close-table", table.table_id, "--reason", REASON,
        "--database-url", sqlite_url(server.database),
    )  # fmt: skip
    assert again.code == 1 and "already closed; nothing changed" in again.err


def test_a_table_closed_by_an_operator_closes_for_everyone_on_a_server_alone(
    server: LiveServer,
) -> None:
    asyncio.run(close_alone(server))
    # The closing is one more change of the move log: the tables still replay.
    tables, mismatches = asyncio.run(audit(sqlite_url(server.database)))
    assert tables > 0 and mismatches == []


def admin(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """`spades admin ARGV...` run in this process: its exit code and standard error."""
    with pytest.raises(SystemExit) as exit_info:
        main(["admin", *argv])
    code = exit_info.value.code
    assert isinstance(code, int)
    return code, capsys.readouterr().err


def test_close_table_changes_nothing_it_cannot_announce_or_find(
    server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    async def seated() -> SeatedTable:
        return await seat_four_humans(server, seed=3)

    table = asyncio.run(seated())
    url = sqlite_url(server.database)
    close = ("close-table", table.table_id, "--reason", REASON, "--database-url", url)
    code, err = admin(capsys, *close, "--broker-url", "redis://127.0.0.1:9/0")
    assert code == 1
    assert "cannot reach the broker at redis://127.0.0.1:9/0; nothing changed" in err
    code, err = admin(capsys, "close-table", "0" * 32, "--reason", REASON, "--database-url", url)
    assert code == 1 and "no such table; nothing changed" in err
    code, err = admin(capsys, *close[:3], " ", *close[4:])
    assert code == 1 and "a reason is 1 to 500 characters" in err

    async def still_open() -> dict[str, Any]:
        return await table.view()

    view = asyncio.run(still_open())
    assert (view["phase"], view["version"]) == ("BIDDING", 4)  # as the game started


async def close_across(a: LiveServer, b: LiveServer, database_url: str, broker: str) -> None:
    table = await seat_four_humans(a, seed=21)
    spectator = await Social.signed_up(a)
    await spectator.watch(table.table_id)
    east_on_b = on(table.players["EAST"], b)
    spectator_on_b = on(spectator, b)
    async with (
        east_on_b.subscribe(GAME_UPDATES, t=table.table_id) as players_view,
        spectator_on_b.subscribe(GAME_UPDATES, t=table.table_id) as spectators_view,
        table.host.subscribe(GAME_UPDATES, t=table.table_id) as on_a,
    ):
        for queue in (players_view, spectators_view, on_a):
            assert (await next_update(queue))["gameUpdates"]["event"] == "SNAPSHOT"
        ran = await spades_async(
            "admin", "close-table", table.table_id, "--reason", REASON,
            "--database-url", database_url, "--broker-url", broker,
        )  # fmt: skip
        assert ran.code == 0, ran.err
        versions = {(await until_closed(q, timeout=5))["view"]["version"] for q in (
            players_view, spectators_view, on_a
        )}  # fmt: skip
        assert versions == {5}  # one more change after the game started (version 4)
    turn = (await table.view())["turn"]
    assert await refused_move(table, on(table.players[turn], b)) == "WRONG_PHASE"
    assert table.table_id not in await lobby_ids(on(spectator, b))


@pytest.mark.xdist_group("redis")
def test_a_table_closed_by_an_operator_closes_on_every_process(tmp_path: Path) -> None:
    with two_processes(tmp_path) as cluster:
        broker = cluster.a.extra_env["SPADES_BROKER_URL"]
        asyncio.run(close_across(cluster.a, cluster.b, cluster.database_url, broker))
