"""Table chat (docs/rules.md, Table chat) on a real server over real WebSockets: who reads and
writes each channel before and after GAME_OVER, blocks in both directions, the text and
rate rules, and the last 100 messages of a channel kept across a restart."""

from __future__ import annotations

import asyncio
import sqlite3
from contextlib import AsyncExitStack

from tests.support.client import ApiError
from tests.support.server import LiveServer
from tests.support.social import Social, befriend
from tests.support.table_talk import (
    CHAT,
    CHAT_MESSAGES,
    chat,
    chat_messages,
    chat_refusal,
    chat_stream,
    make_live,
    play_to_game_over,
    send_chat,
)


async def subscription_error(player: Social, table_id: str) -> str | None:
    """The code a chatMessages subscription answers (it must answer an error)."""
    async with player.subscribe(CHAT_MESSAGES, t=table_id) as queue:
        item = await asyncio.wait_for(queue.get(), 10)
    assert isinstance(item, ApiError), item
    return str(item.code)


async def test_spectators_channel_is_hidden_from_seated_players_until_game_over_and_strangers_never_read(  # noqa: E501
    server: LiveServer,
) -> None:
    north, south, spectator, stranger = [await Social.signed_up(server) for _ in range(4)]
    await befriend(north, spectator)
    await befriend(north, south)
    # FRIENDS_ONLY: the host's friends see and watch it, the stranger does not see it.
    created = await north.create_table(visibility="FRIENDS_ONLY", seed=11)
    table_id = created["id"]
    await south.join(table_id, "SOUTH")
    await north.add_bot(table_id, "EAST")
    await north.add_bot(table_id, "WEST")

    # Writing: seated players write PLAYERS only, spectators SPECTATORS only.
    await send_chat(north, table_id, "PLAYERS", "good luck partner")
    assert (await chat_refusal(north, table_id, "SPECTATORS", "psst")).code == "FORBIDDEN"
    assert (await chat_refusal(spectator, table_id, "PLAYERS", "hi all")).code == "FORBIDDEN"
    await send_chat(spectator, table_id, "SPECTATORS", "north holds the ace of spades")

    # Reading before the game is over.
    assert await chat(north, table_id, "PLAYERS") == ["good luck partner"]
    assert await chat(south, table_id, "SPECTATORS") == []
    assert await chat(north, table_id, "SPECTATORS") == []
    assert await chat(spectator, table_id, "PLAYERS") == ["good luck partner"]
    assert await chat(spectator, table_id, "SPECTATORS") == ["north holds the ace of spades"]
    for channel in ("PLAYERS", "SPECTATORS"):
        assert await stranger.error(CHAT, t=table_id, c=channel) == "NOT_FOUND"
        assert (await chat_refusal(stranger, table_id, channel, "hello")).code == "NOT_FOUND"
    assert await subscription_error(stranger, table_id) == "NOT_FOUND"

    # Live: the seated player gets PLAYERS messages only; the spectator gets both.
    async with chat_stream(south, table_id) as seated, chat_stream(spectator, table_id) as watcher:
        await make_live({"south": seated, "spectator": watcher}, north, table_id, "PLAYERS")
        await send_chat(spectator, table_id, "SPECTATORS", "south should lead hearts")
        await send_chat(north, table_id, "PLAYERS", "nice bid")
        assert await seated.until("nice bid") == ["nice bid"]
        assert await watcher.until("nice bid") == ["south should lead hearts", "nice bid"]
        message = watcher.received[0]
        assert message["channel"] == "SPECTATORS" and message["tableId"] == table_id
        assert message["from"] == {"id": spectator.pid, "username": spectator.name}
        assert message["sentAt"].endswith("Z")

        final = await play_to_game_over({"NORTH": north, "SOUTH": south}, table_id)
        assert final["phase"] == "GAME_OVER"

        # Once it is over the seated players read the spectators' channel, history and live.
        await send_chat(spectator, table_id, "SPECTATORS", "well played")
        assert await seated.until("well played") == ["well played"]
        assert await watcher.until("well played") == ["well played"]
    assert await chat(south, table_id, "SPECTATORS") == [
        "north holds the ace of spades",
        "south should lead hearts",
        "well played",
    ]
    # ...but still do not write it, and the stranger still sees nothing.
    assert (await chat_refusal(south, table_id, "SPECTATORS", "thanks")).code == "FORBIDDEN"
    assert await stranger.error(CHAT, t=table_id, c="SPECTATORS") == "NOT_FOUND"
    assert await subscription_error(stranger, table_id) == "NOT_FOUND"


async def test_a_table_without_spectating_refuses_chat_to_non_seated_players(
    server: LiveServer,
) -> None:
    host, outsider = await Social.signed_up(server), await Social.signed_up(server)
    table_id = (await host.create_table(spectating=False))["id"]
    await send_chat(host, table_id, "PLAYERS", "anyone?")
    assert await outsider.error(CHAT, t=table_id, c="PLAYERS") == "FORBIDDEN"
    assert (await chat_refusal(outsider, table_id, "SPECTATORS", "me")).code == "FORBIDDEN"
    assert await subscription_error(outsider, table_id) == "FORBIDDEN"


async def test_blocked_players_never_reach_each_other_in_history_or_stream(
    server: LiveServer,
) -> None:
    host, ann, bob, cat = [await Social.signed_up(server) for _ in range(4)]
    table_id = (await host.create_table())["id"]
    await send_chat(bob, table_id, "SPECTATORS", "bob before")
    async with AsyncExitStack() as stack:
        streams = {
            p.name: await stack.enter_async_context(chat_stream(p, table_id))
            for p in (ann, bob, cat)
        }
        await make_live(streams, host, table_id, "PLAYERS")
        # Ann blocks Bob while everyone listens: neither receives the other from now on.
        await ann.block(bob.pid)
        await send_chat(bob, table_id, "SPECTATORS", "from bob")
        await send_chat(ann, table_id, "SPECTATORS", "from ann")
        await send_chat(cat, table_id, "SPECTATORS", "from cat")
        assert await streams[ann.name].until("from cat") == ["from ann", "from cat"]
        assert await streams[bob.name].until("from cat") == ["from bob", "from cat"]
        assert await streams[cat.name].until("from cat") == ["from bob", "from ann", "from cat"]

    assert await chat(ann, table_id, "SPECTATORS") == ["from ann", "from cat"]
    assert await chat(bob, table_id, "SPECTATORS") == ["bob before", "from bob", "from cat"]
    assert await chat(cat, table_id, "SPECTATORS") == [
        "bob before",
        "from bob",
        "from ann",
        "from cat",
    ]
    # The host blocks Ann: the host's own PLAYERS messages no longer reach her, both ways.
    await host.block(ann.pid)
    assert "good game" not in await chat(ann, table_id, "PLAYERS")
    await send_chat(host, table_id, "PLAYERS", "good game")
    assert "good game" not in await chat(ann, table_id, "PLAYERS")
    assert "good game" in await chat(cat, table_id, "PLAYERS")
    # Lifting the block lets the messages through again.
    await ann.unblock(bob.pid)
    assert await chat(ann, table_id, "SPECTATORS") == [
        "bob before",
        "from bob",
        "from ann",
        "from cat",
    ]


async def test_text_rules_refuse_bad_messages_and_keep_good_ones_as_written(
    server: LiveServer,
) -> None:
    host = await Social.signed_up(server)
    table_id = (await host.create_table())["id"]
    for bad in ("", "   ", "x" * 301, "two\nlines", "tab\there", "bell\x07", "  " + "y" * 301):
        assert (await chat_refusal(host, table_id, "PLAYERS", bad)).code == "BAD_USER_INPUT", bad
    markup = "<script>alert('hi')</script> & <b>bold</b> \u00e9\u2660"
    sent = await send_chat(host, table_id, "PLAYERS", markup)
    assert sent["text"] == markup
    longest = await send_chat(host, table_id, "PLAYERS", "  " + "z" * 300 + "  ")
    assert longest["text"] == "z" * 300
    # Refusals changed nothing: only the two accepted messages are there.
    assert await chat(host, table_id, "PLAYERS") == [markup, "z" * 300]
    assert await chat(host, table_id, "PLAYERS", last=1) == ["z" * 300]
    for last in (0, -1, 101):
        assert await host.error(CHAT, t=table_id, c="PLAYERS", n=last) == "BAD_USER_INPUT"
    assert await host.error(CHAT, t="nosuchtable", c="PLAYERS") == "NOT_FOUND"
    assert (await chat_refusal(host, "nosuchtable", "PLAYERS", "hi")).code == "NOT_FOUND"


async def test_five_accepted_messages_per_ten_seconds_even_with_rate_limits_off(
    server: LiveServer,
) -> None:
    # The test server runs with SPADES_RATE_LIMITS=0: this limit is a rule of chat.
    host, other = await Social.signed_up(server), await Social.signed_up(server)
    table_id = (await host.create_table())["id"]
    for _ in range(3):  # refused messages do not count
        await chat_refusal(host, table_id, "PLAYERS", "")
    for number in range(5):
        await send_chat(host, table_id, "PLAYERS", f"message {number}")
    refused = await chat_refusal(host, table_id, "PLAYERS", "one too many")
    assert refused.code == "RATE_LIMITED"
    retry_after = refused.errors[0]["extensions"]["retryAfter"]
    assert isinstance(retry_after, int) and 1 <= retry_after <= 10
    # Another player has a window of their own.
    await send_chat(other, table_id, "SPECTATORS", "me too")
    assert await chat(host, table_id, "PLAYERS", last=10) == [f"message {n}" for n in range(5)]
    await asyncio.sleep(retry_after)
    await send_chat(host, table_id, "PLAYERS", "after the wait")


async def test_the_last_hundred_messages_of_each_channel_survive_a_restart(
    fresh_server: LiveServer,
) -> None:
    host = await Social.signed_up(fresh_server)
    table_id = (await host.create_table())["id"]
    await send_chat(host, table_id, "PLAYERS", "kept on its own channel")
    spectators = [await Social.signed_up(fresh_server) for _ in range(21)]
    sent = []
    for number, spectator in enumerate(spectators):
        for k in range(5):
            text = f"spectator {number} message {k}"
            await send_chat(spectator, table_id, "SPECTATORS", text)
            sent.append(text)
    assert len(sent) == 105
    before = await chat(spectators[0], table_id, "SPECTATORS", last=100)
    assert before == sent[5:]

    fresh_server.restart()

    assert await chat(spectators[0], table_id, "SPECTATORS", last=100) == sent[5:]
    assert await chat(spectators[0], table_id, "SPECTATORS") == sent[-50:]
    assert await chat(host, table_id, "PLAYERS") == ["kept on its own channel"]
    stored = await chat_messages(host, table_id, "PLAYERS")
    assert stored[0]["from"]["id"] == host.pid
    connection = sqlite3.connect(fresh_server.database)
    try:
        counts = dict(
            connection.execute(
                "SELECT channel, count(*) FROM chat_messages WHERE table_id = ? GROUP BY channel",
                (table_id,),
            ).fetchall()
        )
    finally:
        connection.close()
    assert counts == {"PLAYERS": 1, "SPECTATORS": 100}
