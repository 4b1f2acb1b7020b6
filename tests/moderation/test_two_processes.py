"""A ban across two server processes on one PostgreSQL database and one Redis: decided on
one, in force on both the moment it is acknowledged (no cached token lets a request
through, sockets close with 4401, no move of the banned player applies after it), from a
moderator's mutation or from the operator's command."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.scale.harness import (
    Cluster,
    FastApi,
    choose_move,
    logged_moves,
    on,
    send,
    two_processes,
)
from tests.security.helpers import receive, subscribe, ws_connection
from tests.support.client import ApiError
from tests.support.moderation import admin, ban, grant, refusal, report, sign_in
from tests.support.services import redis_url

from .test_sanctions import LOBBY_UPDATES, ME, closed_within

# Redis is shared machine-wide with the tests that stop and restart it.
pytestmark = pytest.mark.xdist_group("redis")

GAME = "query($t: ID!) { game(tableId: $t) { phase turn viewerSeat version handWithheld hand { suit rank } legalPlays { suit rank } } }"  # noqa: E501
HUMAN_MOVES = frozenset({"bid", "reveal", "pass", "play"})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    """Processes A and B for the whole module."""
    with two_processes(tmp_path_factory.mktemp("moderation")) as both:
        yield both


async def moderator_on(cluster: Cluster) -> FastApi:
    """A new moderator, talking to process A."""
    moderator = await FastApi(cluster.a).sign_up()
    assert moderator.player_id is not None
    await asyncio.to_thread(grant, cluster.a, moderator.player_id, "MODERATOR")
    return moderator


async def test_a_ban_on_one_process_stops_the_token_the_other_process_cached_at_once(
    cluster: Cluster,
) -> None:
    moderator = await moderator_on(cluster)
    banned = await FastApi(cluster.a).sign_up()
    assert banned.player_id is not None
    there = on(banned, cluster.b)
    assert (await there.call(ME))["me"]["id"] == banned.player_id  # cached by B
    async with ws_connection(cluster.b, banned.token) as socket:
        assert (await receive(socket))["type"] == "connection_ack"
        await subscribe(socket, "lobby", LOBBY_UPDATES)
        await asyncio.sleep(0.3)
        await ban(moderator, banned.player_id, "abuse")
        # The very next request, on the other process: its cache let nothing through.
        assert await refusal(there.call(ME)) == "UNAUTHENTICATED"
        assert await closed_within(socket, 5) == 4401
    assert await refusal(sign_in(there)) == "FORBIDDEN"
    assert await refusal(banned.call(ME)) == "UNAUTHENTICATED"


async def test_no_move_of_a_banned_player_racing_the_ban_on_two_processes_applies_after_it(
    cluster: Cluster,
) -> None:
    moderator = await moderator_on(cluster)
    banned = await FastApi(cluster.a).sign_up()
    assert banned.player_id is not None
    table = await banned.create_table(seed=19)
    table_id = str(table["id"])
    for seat in ("EAST", "SOUTH", "WEST"):
        await banned.add_bot(table_id, seat)

    acknowledged: list[str] = []  # the kinds of the banned player's accepted moves
    after_ban: list[str | None] = []  # what their requests sent after the ban answered
    banned_at = asyncio.Event()

    async def keep_moving(api: FastApi) -> None:
        # Each loop reads its own view and sends the move (both loops race each other
        # too, and answer NOT_YOUR_TURN or the like when the other was first).
        while True:
            sent_after_ban = banned_at.is_set()
            try:
                view = (await api.call(GAME, t=table_id))["game"]
                if view["turn"] != view["viewerSeat"] or view["phase"] == "GAME_OVER":
                    await asyncio.sleep(0.005)
                    continue
                move = choose_move(view)
                await send(api, table_id, move)
            except ApiError as exc:
                if sent_after_ban:
                    after_ban.append(exc.code)
                    if len(after_ban) >= 6:
                        return
                continue
            if sent_after_ban:
                after_ban.append("ACCEPTED")
            acknowledged.append(move[0])

    movers = [asyncio.create_task(keep_moving(api)) for api in (banned, on(banned, cluster.b))]
    try:
        while len(acknowledged) < 8:
            await asyncio.sleep(0.01)
        await ban(moderator, banned.player_id, "racing")
        banned_at.set()
        await asyncio.wait_for(asyncio.gather(*movers), 30)
    finally:
        for mover in movers:
            mover.cancel()
        with contextlib.suppress(BaseException):
            await asyncio.gather(*movers)

    # Every request sent once the ban was acknowledged, on either process, was refused.
    assert set(after_ban) == {"UNAUTHENTICATED"}, after_ban
    # The move log: the seat went to a bot, and every move of the banned player before
    # that is one they were told was accepted (none applied after; none was lost).
    log = await logged_moves(cluster.database_url, table_id)
    replaced = next(i for i, e in enumerate(log) if e["type"] == "replace" and e["seat"] == "NORTH")
    before = [e["type"] for e in log[:replaced] if _by_north(e)]
    assert len(before) == len(acknowledged), (before, acknowledged)
    assert log[replaced]["player"].startswith("bot:")


def _by_north(entry: dict[str, Any]) -> bool:
    return entry["type"] in HUMAN_MOVES and entry.get("seat") == "NORTH"


async def test_at_most_ten_reports_an_hour_hold_for_concurrent_reports_on_two_processes(
    cluster: Cluster,
) -> None:
    reporter = await FastApi(cluster.a).sign_up()
    target = await FastApi(cluster.b).sign_up()
    assert target.player_id is not None
    sides = [reporter, on(reporter, cluster.b)]

    async def one(number: int) -> str:
        try:
            await report(sides[number % 2], str(target.player_id), "STALLING")
        except ApiError as exc:
            return str(exc.code)
        return "STORED"

    answers = await asyncio.gather(*(one(n) for n in range(16)))
    assert sorted(answers) == ["RATE_LIMITED"] * 6 + ["STORED"] * 10


async def test_the_operators_ban_through_the_broker_holds_on_every_process_when_it_returns(
    cluster: Cluster,
) -> None:
    banned = await FastApi(cluster.a).sign_up()
    here, there = banned, on(banned, cluster.b)
    for api in (here, there):
        assert (await api.call(ME))["me"]["id"] == banned.player_id  # cached by both
    done = await asyncio.to_thread(
        admin, cluster.a, "ban", str(banned.username), "--reason", "raid", broker=redis_url()
    )
    assert done.returncode == 0, done.stderr
    for api in (here, there):
        assert await refusal(api.call(ME)) == "UNAUTHENTICATED"
    lifted = await asyncio.to_thread(admin, cluster.b, "unban", str(banned.username))
    assert lifted.returncode == 0, lifted.stderr
    assert await sign_in(there)
