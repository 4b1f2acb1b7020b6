"""Mutes, bans, lifts and hidden messages (docs/rules.md, Moderation) on a real server, over
HTTP and WebSocket: a mute silences chat only, a ban signs the player out everywhere and
takes them off every table for good, nobody sanctions an admin or themselves, and every
sanction shows who gave and lifted it."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime

import pytest
from websockets.exceptions import ConnectionClosed

from tests.security.helpers import receive, subscribe, ws_connection
from tests.support.client import Api
from tests.support.moderation import (
    HIDE,
    MY_MUTE,
    RECLAIM,
    REPORT_CONTEXT,
    ban,
    lift,
    mute,
    refusal,
    report,
    sanctions,
    sign_in,
)
from tests.support.server import LiveServer
from tests.support.social import GAME_UPDATES, Social
from tests.support.table_talk import chat, chat_refusal, play_to_game_over, send_chat

ME = "{ me { id } }"
LOBBY_UPDATES = "subscription { lobbyUpdates { event tableId } }"
TABLE = "query($t: ID!) { table(id: $t) { status host { id } seats { seat playerId isBot } } }"
OWN_REPORT = (
    "mutation($p: ID!, $m: ID) { reportPlayer(playerId: $p, reason: OTHER, messageId: $m) "
    "{ id messageHidden context { id } } }"
)
STATS = "query($u: String!) { profile(username: $u) { stats { games abandoned } } }"


def seconds_until(instant: str) -> float:
    """Seconds from now until an ISO-8601 instant."""
    return datetime.fromisoformat(instant.replace("Z", "+00:00")).timestamp() - time.time()


async def closed_within(socket: object, seconds: float) -> int | None:
    """The close code the server closes `socket` with, within `seconds`."""
    started = time.monotonic()
    with pytest.raises(ConnectionClosed):
        while True:
            await receive(socket, seconds)  # type: ignore[arg-type]
    assert time.monotonic() - started < seconds
    return socket.close_code  # type: ignore[attr-defined, no-any-return]


async def test_a_muted_player_cannot_chat_until_the_mute_is_lifted_and_nothing_else_changes(
    server: LiveServer, moderator: Social
) -> None:
    talker, partner = await Social.signed_up(server), await Social.signed_up(server)
    table = await talker.create_table()
    await partner.join(table["id"], "SOUTH")
    for minutes in (0, 10_081):
        assert await refusal(mute(moderator, talker.pid, minutes)) == "BAD_USER_INPUT"
    assert await refusal(mute(moderator, talker.pid, 5, reason="  ")) == "BAD_USER_INPUT"
    given = await mute(moderator, talker.pid, 90, reason="insults")
    assert given["kind"] == "MUTE" and given["reason"] == "insults"
    assert given["by"] == {"id": moderator.pid, "username": moderator.name}
    assert 89 * 60 < seconds_until(given["endsAt"]) <= 90 * 60
    assert given["liftedAt"] is None and given["liftedBy"] is None

    refused = await chat_refusal(talker, table["id"], "PLAYERS", "you all stink")
    assert refused.code == "FORBIDDEN" and "muted" in str(refused)
    assert (await talker.call(MY_MUTE))["myMute"] == {
        "reason": "insults",
        "endsAt": given["endsAt"],
    }
    # Nothing else changes: they play, report, and read chat as before.
    await talker.add_bot(table["id"], "EAST")
    await send_chat(partner, table["id"], "PLAYERS", "hello?")
    assert await chat(talker, table["id"], "PLAYERS") == ["hello?"]
    await report(talker, partner.pid, "OTHER")
    assert (await partner.call(MY_MUTE))["myMute"] is None

    lifted = await lift(moderator, given["id"])
    assert lifted["liftedBy"] == {"id": moderator.pid, "username": moderator.name}
    assert lifted["liftedAt"] is not None
    assert (await send_chat(talker, table["id"], "PLAYERS", "sorry"))["text"] == "sorry"
    assert (await talker.call(MY_MUTE))["myMute"] is None
    assert await mute(moderator, talker.pid, 10_080) != given  # a week is the most


async def test_nobody_sanctions_an_admin_or_themselves(
    server: LiveServer, moderator: Social, admin: Social
) -> None:
    assert await refusal(mute(moderator, admin.pid, 5)) == "FORBIDDEN"
    assert await refusal(ban(moderator, admin.pid)) == "FORBIDDEN"
    assert await refusal(mute(moderator, moderator.pid, 5)) == "FORBIDDEN"
    assert await refusal(ban(admin, admin.pid)) == "FORBIDDEN"
    # A moderator may be sanctioned (by an admin or another moderator), but not lift it.
    muted = await mute(admin, moderator.pid, 5)
    assert await refusal(lift(moderator, muted["id"])) == "FORBIDDEN"
    assert (await lift(admin, muted["id"]))["liftedBy"]["id"] == admin.pid


async def test_a_ban_signs_the_player_out_everywhere_at_once_until_it_is_lifted(
    server: LiveServer, moderator: Social
) -> None:
    banned = await Social.signed_up(server)
    second = Api(server, await sign_in(banned))
    for api in (banned, second):
        assert (await api.call(ME))["me"]["id"] == banned.pid  # both tokens cached now
    async with ws_connection(server, banned.token) as socket:
        assert (await receive(socket))["type"] == "connection_ack"
        await subscribe(socket, "lobby", LOBBY_UPDATES)
        await asyncio.sleep(0.3)
        given = await ban(moderator, banned.pid, "cheating")
        assert given["kind"] == "BAN" and given["endsAt"] is None
        for api in (banned, second):
            assert await refusal(api.call(ME)) == "UNAUTHENTICATED"
        assert await closed_within(socket, 5) == 4401
        assert socket.close_reason == "account banned"
    async with ws_connection(server, second.token) as socket:
        assert await closed_within(socket, 5) == 4401
    refused = await refusal(sign_in(banned))
    assert refused == "FORBIDDEN"
    assert await refusal(sign_in(banned, "wrong password")) == "UNAUTHENTICATED"
    # A second ban answers the one in force.
    assert (await ban(moderator, banned.pid, "again"))["id"] == given["id"]

    await lift(moderator, given["id"])
    banned.token = await sign_in(banned)
    assert (await banned.call(ME))["me"]["id"] == banned.pid
    assert await refusal(second.call(ME)) == "UNAUTHENTICATED"  # old tokens stay revoked


async def test_a_banned_player_loses_their_seat_mid_game_to_a_bot_for_good(
    server: LiveServer, moderator: Social
) -> None:
    host, partner = await Social.signed_up(server), await Social.signed_up(server)
    table = await host.create_table(seed=7)
    table_id = table["id"]
    await partner.join(table_id, "SOUTH")
    await host.add_bot(table_id, "EAST")
    await host.add_bot(table_id, "WEST")
    async with partner.subscribe(GAME_UPDATES, t=table_id) as updates:
        assert (await asyncio.wait_for(updates.get(), 10))["gameUpdates"]["event"] == "SNAPSHOT"
        given = await ban(moderator, host.pid, "abuse")
        seen = []
        while "PLAYER_REPLACED" not in seen:
            seen.append((await asyncio.wait_for(updates.get(), 10))["gameUpdates"]["event"])
    after = (await partner.call(TABLE, t=table_id))["table"]
    north = next(s for s in after["seats"] if s["seat"] == "NORTH")
    assert north["isBot"] and after["status"] == "PLAYING"
    assert after["host"]["id"] == partner.pid

    # Even after the ban is lifted, the seat stays the bot's.
    await lift(moderator, given["id"])
    host.token = await sign_in(host)
    assert await refusal(host.call(RECLAIM, t=table_id)) == "FORBIDDEN"
    final = await play_to_game_over({"SOUTH": partner}, table_id)
    assert final["phase"] == "GAME_OVER"
    stats = (await partner.call(STATS, u=host.name))["profile"]["stats"]
    assert stats == {"games": 1, "abandoned": 1}


async def test_a_ban_empties_their_waiting_seats_passing_the_host_clockwise_from_north(
    server: LiveServer, moderator: Social
) -> None:
    host, west, south = [await Social.signed_up(server) for _ in range(3)]
    shared = await host.create_table()
    await west.join(shared["id"], "WEST")
    await south.join(shared["id"], "SOUTH")
    alone = await host.create_table()

    await ban(moderator, host.pid)
    after = (await west.call(TABLE, t=shared["id"]))["table"]
    assert after["status"] == "WAITING" and after["host"]["id"] == south.pid
    assert {s["seat"]: s["playerId"] for s in after["seats"]} == {
        "NORTH": None,
        "EAST": None,
        "SOUTH": south.pid,
        "WEST": west.pid,
    }
    # Nobody is left at the table they sat at alone: it closes.
    assert (await moderator.call(TABLE, t=alone["id"]))["table"]["status"] == "CLOSED"


async def test_sanctions_list_newest_first_with_lifted_ones_and_who_gave_and_lifted_them(
    server: LiveServer, moderator: Social, admin: Social
) -> None:
    player = await Social.signed_up(server)
    muted = await mute(moderator, player.pid, 30, "spam")
    banned = await ban(admin, player.pid, "more spam")
    await lift(admin, muted["id"])
    listed = await sanctions(moderator, player.pid)
    assert [s["id"] for s in listed] == [banned["id"], muted["id"]]
    assert listed[0]["by"]["id"] == admin.pid and listed[0]["liftedAt"] is None
    assert listed[1]["by"]["id"] == moderator.pid and listed[1]["liftedBy"]["id"] == admin.pid
    assert all(s["player"] == {"id": player.pid, "username": player.name} for s in listed)


async def test_a_hidden_message_leaves_every_chat_answer_but_its_report_still_shows_it(
    server: LiveServer, moderator: Social
) -> None:
    host, guest, watcher = [await Social.signed_up(server) for _ in range(3)]
    table = await host.create_table()
    table_id = table["id"]
    await guest.join(table_id, "SOUTH")
    await watcher.call("mutation($t: ID!) { watchTable(tableId: $t) { id } }", t=table_id)
    before = await send_chat(host, table_id, "PLAYERS", "hello")
    insult = await send_chat(guest, table_id, "PLAYERS", "rude words")
    after = await send_chat(host, table_id, "PLAYERS", "that was rude")
    made = await report(host, guest.pid, message_id=insult["id"])

    assert (await moderator.call(HIDE, m=insult["id"]))["hideChatMessage"] is True
    assert (await moderator.call(HIDE, m=insult["id"]))["hideChatMessage"] is True
    for reader in (host, guest, watcher):
        assert await chat(reader, table_id, "PLAYERS") == ["hello", "that was rude"]
    nodes = (await moderator.call(REPORT_CONTEXT, s="OPEN"))["reports"]["edges"]
    shown = next(e["node"] for e in nodes if e["node"]["id"] == made["id"])
    assert shown["message"] == insult and shown["messageHidden"] is True
    assert shown["context"] == [before, insult, after]
    # The reporter sees their report, but neither the context nor what moderators did.
    own = await host.call(OWN_REPORT, p=guest.pid, m=insult["id"])
    assert own["reportPlayer"] == {"id": made["id"], "messageHidden": False, "context": []}
    assert await refusal(host.call(REPORT_CONTEXT, s="OPEN")) == "FORBIDDEN"
