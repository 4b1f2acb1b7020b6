"""`spades admin` (docs/operations.md) against a running server's database: roles that hold
at once, and bans, unbans and mutes by username, recorded as the operator's (no player).
Here the server has no broker: it finds the command's ban itself, within seconds."""

from __future__ import annotations

import asyncio
import sqlite3
import time

from tests.security.helpers import receive, subscribe, ws_connection
from tests.support.moderation import MY_ROLE, admin, refusal, sanctions, sign_in
from tests.support.server import LiveServer
from tests.support.social import Social
from tests.support.table_talk import chat_refusal

from .conftest import Account
from .test_sanctions import LOBBY_UPDATES, ME, TABLE, closed_within

REPORTS = "{ reports { edges { cursor } } }"


async def test_a_role_given_or_taken_by_the_operator_holds_at_once(server: LiveServer) -> None:
    player = await Social.signed_up(server)
    assert await refusal(player.call(REPORTS)) == "FORBIDDEN"
    done = admin(server, "role", player.name, "moderator")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"{player.name}: MODERATOR (was PLAYER)"
    assert (await player.call(MY_ROLE))["myRole"] == "MODERATOR"
    assert "edges" in (await player.call(REPORTS))["reports"]
    assert admin(server, "role", player.name, "PLAYER").returncode == 0
    assert await refusal(player.call(REPORTS)) == "FORBIDDEN"
    # Each change is recorded, with no player as its author.
    with sqlite3.connect(server.database) as db:
        rows = db.execute(
            "SELECT role, previous, by_id FROM role_changes WHERE player_id = ? ORDER BY seq",
            (player.pid,),
        ).fetchall()
    assert rows == [("MODERATOR", "PLAYER", None), ("PLAYER", "MODERATOR", None)]


async def test_the_operator_mutes_bans_and_unbans_by_username_as_no_player(
    server: LiveServer, moderator: Social
) -> None:
    player = await Social.signed_up(server)
    table = await player.create_table()
    muted = admin(server, "mute", player.name, "--minutes", "30", "--reason", "shouting")
    assert muted.returncode == 0, muted.stderr
    assert (await chat_refusal(player, table["id"], "PLAYERS", "HEY")).code == "FORBIDDEN"

    async with ws_connection(server, player.token) as socket:
        assert (await receive(socket))["type"] == "connection_ack"
        await subscribe(socket, "lobby", LOBBY_UPDATES)
        await asyncio.sleep(0.3)
        banned = admin(server, "ban", player.name, "--reason", "raids")
        assert banned.returncode == 0, banned.stderr
        assert "banned until lifted" in banned.stdout
        # Without a broker the server's watch finds the ban (every 2 s by default).
        assert await closed_within(socket, 5) == 4401
    assert await refusal(player.call(ME)) == "UNAUTHENTICATED"
    deadline = time.monotonic() + 5
    while (await moderator.call(TABLE, t=table["id"]))["table"]["status"] != "CLOSED":
        assert time.monotonic() < deadline, "the banned player's table stayed open"
        await asyncio.sleep(0.2)
    assert await refusal(sign_in(player)) == "FORBIDDEN"

    unbanned = admin(server, "unban", player.name)
    assert unbanned.returncode == 0 and "may sign in again" in unbanned.stdout
    player.token = await sign_in(player)
    listed = await sanctions(moderator, player.pid)
    assert [(s["kind"], s["reason"]) for s in listed] == [("BAN", "raids"), ("MUTE", "shouting")]
    assert all(s["by"] is None for s in listed)
    assert listed[0]["liftedAt"] is not None and listed[0]["liftedBy"] is None


async def test_the_operator_is_refused_what_the_rules_refuse(
    server: LiveServer, admin_account: Account
) -> None:
    # An admin is sanctioned by nobody, the operator included (demote them first).
    refused = admin(server, "ban", admin_account.username, "--reason", "no")
    assert refused.returncode == 1 and "FORBIDDEN" in refused.stderr
    unknown = admin(server, "mute", "nobody_here", "--minutes", "5", "--reason", "x")
    assert unknown.returncode == 1 and "NOT_FOUND" in unknown.stderr
