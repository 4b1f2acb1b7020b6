"""Faults: a server process killed mid-hand, Redis restarted mid-game, the database
unreachable. Play goes on, subscriptions recover, and the move log stays whole."""

from __future__ import annotations

import asyncio
import time
from contextlib import AsyncExitStack

import pytest
from websockets.exceptions import ConnectionClosed

from tests.security.helpers import Gql, http_client, receive, subscribe, ws_connection
from tests.support.services import PrivateRedis

from .conftest import StartServer
from .harness import (
    FastApi,
    assert_consecutive,
    assert_log_complete,
    awaits,
    choose_move,
    database_outage,
    error_code,
    first_update,
    health,
    move_log,
    on,
    play_turns_until_over,
    send,
    take_turn,
    wait_for_health,
    watching,
    ws_session,
)

BOTS = ("EAST", "SOUTH", "WEST")


async def test_sigkill_of_one_process_mid_hand_play_goes_on_on_the_other_and_the_log_has_no_gap(
    pg_url: str, broker_url: str, start_server: StartServer
) -> None:
    # A drives its bots slowly, so that it dies while a bot owes a move.
    a = start_server(pg_url, broker_url, env={"SPADES_BOT_DELAY_MS": "400"})
    b = start_server(pg_url, broker_url)
    alice = await FastApi(a).sign_up()
    watcher = await FastApi(b).sign_up()
    table_id = str((await alice.create_table(name="kill", seed=21))["id"])
    async with watching(watcher, table_id) as spectator:
        async with watching(alice, table_id) as mine:
            await mine.next()
            for seat in BOTS:
                await alice.add_bot(table_id, seat)
            while True:
                after = await take_turn(alice, table_id, mine, "NORTH", bid=13, timeout=30)
                assert after is not None
                if after["phase"] == "PLAYING" and after["turn"] != "NORTH":
                    break
            a.stop(kill=True)
            killed_at = after["version"]
            seen = mine.latest["version"]

        # B's sweeper takes over the bots A was driving.
        started = time.monotonic()
        await spectator.until(killed_at + 1, timeout=15)
        assert time.monotonic() - started < 10

        # Alice reconnects to B with what she has seen and plays the game to its end.
        alice_b = on(alice, b)
        async with watching(alice_b, table_id, since=seen) as resumed:
            final = await play_turns_until_over(alice_b, table_id, resumed, "NORTH", bid=13)
        await spectator.until(final["version"])

    assert final["phase"] == "GAME_OVER"
    assert resumed.versions[0] == seen + 1
    assert_consecutive(resumed)
    assert "SNAPSHOT" not in resumed.events
    assert_consecutive(spectator)
    assert spectator.versions[-1] == final["version"]
    rows, version = await move_log(pg_url, table_id)
    assert version == final["version"]
    assert_log_complete(rows, version)


async def test_redis_restart_mid_game_subscriptions_on_both_processes_recover_within_seconds(
    pg_url: str, private_redis: PrivateRedis, start_server: StartServer
) -> None:
    a = start_server(pg_url, private_redis.url)
    b = start_server(pg_url, private_redis.url)
    alice = await FastApi(a).sign_up()
    watcher = await FastApi(b).sign_up()
    latecomer = await FastApi(b).sign_up()
    table_id = str((await alice.create_table(name="redis", seed=22))["id"])
    async with AsyncExitStack() as stack:
        mine = await stack.enter_async_context(watching(alice, table_id))
        spectator = await stack.enter_async_context(watching(watcher, table_id))
        await mine.next()
        await spectator.next()
        for seat in BOTS:
            await alice.add_bot(table_id, seat)
        for _ in range(3):
            await take_turn(alice, table_id, mine, "NORTH")
        await mine.until_turn("NORTH")

        try:
            private_redis.stop()
            for server in (a, b):
                body = await wait_for_health(server, 503)
                assert (body["broker"], body["database"]) == ("unavailable", "ok")
            # Moves still apply (the database is the truth); the updates are not fanned out.
            during = await send(alice, table_id, choose_move(mine.latest), mine.latest["version"])
            assert during["version"] > mine.latest["version"]
            deadline = time.monotonic() + 15
            view = await alice.game(table_id)
            while not awaits(view, "NORTH") and view["phase"] != "GAME_OVER":
                assert time.monotonic() < deadline, "the bots stopped while Redis was down"
                await asyncio.sleep(0.1)
                view = await alice.game(table_id)
            # Someone subscribes while Redis is down.
            late = await stack.enter_async_context(watching(latecomer, table_id))
        finally:
            private_redis.start()
        restarted = time.monotonic()

        # Every subscription catches up from the database, then carries live updates again.
        for watch in (mine, spectator, late):
            await watch.until(view["version"], timeout=10)
        assert time.monotonic() - restarted < 10
        for server in (a, b):
            await wait_for_health(server, 200)
        after = await take_turn(alice, table_id, mine, "NORTH", timeout=10)
        assert after is not None
        for watch in (mine, spectator, late):
            await watch.until(after["version"], timeout=10)

    for watch in (mine, spectator, late):
        assert_consecutive(watch)
    assert late.events[0] == "SNAPSHOT"
    rows, version = await move_log(pg_url, table_id)
    assert_log_complete(rows, version)


async def test_database_outage_answers_unavailable_and_the_game_resumes_intact(
    pg_url: str, start_server: StartServer
) -> None:
    server = start_server(pg_url, env={"SPADES_BOT_DELAY_MS": "150"})
    alice = await FastApi(server).sign_up()
    bob = await FastApi(server).sign_up()  # a valid token the server has not checked yet
    table_id = str((await alice.create_table(name="outage", seed=23))["id"])
    async with AsyncExitStack() as stack:
        mine = await stack.enter_async_context(watching(alice, table_id))
        await mine.next()
        for seat in BOTS:
            await alice.add_bot(table_id, seat)
        while True:
            await take_turn(alice, table_id, mine, "NORTH", timeout=30)
            view = await mine.until_turn("NORTH", timeout=30)
            if view["phase"] == "PLAYING" and view["currentTrick"]:
                break
        before = await alice.game(table_id)
        move = choose_move(before)

        async with database_outage(pg_url):
            assert await error_code(send(alice, table_id, move, before["version"])) == (
                "UNAVAILABLE"
            )
            assert await error_code(send(alice, table_id, move)) == "UNAVAILABLE"
            assert await error_code(alice.game(table_id)) == "UNAVAILABLE"
            assert await error_code(FastApi(server).sign_up()) == "UNAVAILABLE"
            # A token the server has not seen lately cannot be checked: UNAVAILABLE too,
            # not an HTTP 500 (nor UNAUTHENTICATED).
            stranger = FastApi(server, token="a-token-this-server-never-checked")
            assert await error_code(stranger.call("{ me { id } }")) == "UNAVAILABLE"
            async with watching(alice, table_id) as late:
                assert await error_code(late.next()) == "UNAVAILABLE"
            # A WebSocket opened now cannot check its token: its subscriptions answer
            # UNAVAILABLE (not a rejected connection) until the database is back.
            session = await stack.enter_async_context(ws_session(bob))
            assert await error_code(first_update(session, table_id)) == "UNAVAILABLE"
            status, body = await health(server)
            assert (status, body["database"]) == (503, "unavailable")

        await wait_for_health(server, 200)
        assert await alice.game(table_id) == before  # nothing changed, nothing lost
        watched = await first_update(session, table_id)  # the same connection recovers
        assert (watched["event"], watched["view"]["version"]) == ("SNAPSHOT", before["version"])
        after = await send(alice, table_id, move, before["version"])
        assert after["version"] > before["version"]
        assert len(after["hand"]) == len(before["hand"]) - 1

        # Again, while the bots owe moves: they resume once the database is back.
        async with database_outage(pg_url):
            await asyncio.sleep(2)
        # The hand is played to its end.
        while True:
            view = await mine.until_turn("NORTH", timeout=30)
            if view["phase"] == "GAME_OVER" or view["handNumber"] > before["handNumber"]:
                break
            await take_turn(alice, table_id, mine, "NORTH", bid=13, timeout=30)

    assert_consecutive(mine)
    assert "SNAPSHOT" not in mine.events[1:]
    rows, version = await move_log(pg_url, table_id)
    assert version >= mine.latest["version"]
    assert_log_complete(rows, version)


async def test_a_websocket_opened_during_an_outage_is_guarded_once_its_token_is_checked(
    pg_url: str, start_server: StartServer
) -> None:
    server = start_server(pg_url)
    async with http_client() as http, AsyncExitStack() as stack:
        bob = await Gql(server, http).sign_up()  # a token this server has not checked yet
        async with database_outage(pg_url):
            socket = await stack.enter_async_context(ws_connection(server, bob.token))
            assert (await receive(socket))["type"] == "connection_ack"
        await wait_for_health(server, 200)
        # The first operation checks the token now, and registers the socket...
        await subscribe(socket, "lobby", "subscription { lobbyUpdates { event } }")
        await asyncio.sleep(0.3)
        # ...so signing out closes it, as it closes every socket of that token.
        assert await bob.data("mutation { signOut }") == {"signOut": True}
        with pytest.raises(ConnectionClosed):
            while True:
                await receive(socket, timeout=10)
        assert socket.close_code == 4401
