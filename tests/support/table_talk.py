"""Chat and rematch through the API: sending and reading chat, a live chat stream that
can tell "nothing arrived" from "not yet" with a marker, asking for a rematch, and
games played quickly to GAME_OVER with bots."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from .client import GAME_FIELDS, Api, ApiError, next_update
from .play import View, Watcher, north_south_overbid, play_with_bots, watching

MESSAGE_FIELDS = "id tableId channel from { id username } text sentAt"
SEND_CHAT = (
    "mutation($t: ID!, $c: ChatChannel!, $x: String!) "
    f"{{ sendChat(tableId: $t, channel: $c, text: $x) {{ {MESSAGE_FIELDS} }} }}"
)
CHAT = (
    "query($t: ID!, $c: ChatChannel!, $n: Int) "
    f"{{ chat(tableId: $t, channel: $c, last: $n) {{ {MESSAGE_FIELDS} }} }}"
)
CHAT_MESSAGES = f"subscription($t: ID!) {{ chatMessages(tableId: $t) {{ {MESSAGE_FIELDS} }} }}"
REMATCH_TABLE_FIELDS = """
  id rematchOf status host { id username } visibility joinPolicy spectating
  seats { seat playerId username isBot }
  game { phase version viewerSeat nextTableId rematchRequests handNumber }
"""
REQUEST_REMATCH = (
    f"mutation($t: ID!) {{ requestRematch(tableId: $t) {{ {REMATCH_TABLE_FIELDS} }} }}"
)
TABLE = f"query($t: ID!) {{ table(id: $t) {{ {REMATCH_TABLE_FIELDS} }} }}"
REMATCH_UPDATES = (
    "subscription($t: ID!, $s: Int) { gameUpdates(tableId: $t, since: $s) "
    f"{{ event seat view {{ {GAME_FIELDS} nextTableId rematchRequests }} }} }}"
)


async def send_chat(api: Api, table_id: str, channel: str, text: str) -> dict[str, Any]:
    """sendChat: the accepted message."""
    data = await api.call(SEND_CHAT, t=table_id, c=channel, x=text)
    return dict(data["sendChat"])


async def chat(api: Api, table_id: str, channel: str, last: int | None = None) -> list[str]:
    """The texts of `chat(...)`, oldest first."""
    return [m["text"] for m in await chat_messages(api, table_id, channel, last)]


async def chat_messages(
    api: Api, table_id: str, channel: str, last: int | None = None
) -> list[dict[str, Any]]:
    """`chat(...)`: the messages, oldest first."""
    variables: dict[str, Any] = {"t": table_id, "c": channel}
    if last is not None:
        variables["n"] = last
    return list((await api.call(CHAT, **variables))["chat"])


async def chat_refusal(api: Api, table_id: str, channel: str, text: str) -> ApiError:
    """The error sendChat must answer."""
    try:
        await send_chat(api, table_id, channel, text)
    except ApiError as exc:
        return exc
    raise AssertionError(f"sendChat of {text!r} to {channel} was accepted")


async def request_rematch(api: Api, table_id: str) -> dict[str, Any]:
    """requestRematch: the table it answers."""
    return dict((await api.call(REQUEST_REMATCH, t=table_id))["requestRematch"])


async def table(api: Api, table_id: str) -> dict[str, Any]:
    """`table(id)` with the rematch fields."""
    return dict((await api.call(TABLE, t=table_id))["table"])


class ChatStream:
    """One live chatMessages subscription."""

    def __init__(self, queue: asyncio.Queue[Any]) -> None:
        self.queue = queue
        self.received: list[dict[str, Any]] = []

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next message (waiting for it)."""
        message = dict((await next_update(self.queue, timeout))["chatMessages"])
        self.received.append(message)
        return message

    async def until(self, text: str, timeout: float = 10.0) -> list[str]:
        """The texts received up to and including `text` (a marker sent after the messages
        under test: a stream delivers in order, so whatever it did not deliver before the
        marker it will not deliver at all)."""
        texts: list[str] = []
        while True:
            texts.append((await self.next(timeout))["text"])
            if texts[-1] == text:
                return texts

    def idle(self) -> bool:
        """Nothing more has arrived."""
        return self.queue.empty()


@asynccontextmanager
async def chat_stream(api: Api, table_id: str) -> AsyncIterator[ChatStream]:
    """A chatMessages subscription, live once the context is entered: the server has
    registered it when a first marker arrives (see `live`)."""
    async with api.subscribe(CHAT_MESSAGES, t=table_id) as queue:
        yield ChatStream(queue)


async def make_live(
    streams: Mapping[str, ChatStream], writer: Api, table_id: str, channel: str
) -> None:
    """Send markers until every stream has received one (each subscription is then
    registered on the server), and forget them."""
    for attempt in range(50):
        marker = f"marker {attempt}"
        await send_chat_patiently(writer, table_id, channel, marker)
        await asyncio.sleep(0.1)
        if all(not s.idle() for s in streams.values()):
            for stream in streams.values():
                await stream.until(marker)
            for stream in streams.values():
                stream.received.clear()
            return
        for stream in streams.values():
            while not stream.idle():
                await stream.next()
    raise AssertionError("the chat streams never went live")


async def send_chat_patiently(api: Api, table_id: str, channel: str, text: str) -> dict[str, Any]:
    """sendChat, waiting out the 5-per-10-s limit if needed."""
    while True:
        try:
            return await send_chat(api, table_id, channel, text)
        except ApiError as exc:
            if exc.code != "RATE_LIMITED":
                raise
            await asyncio.sleep(float(exc.errors[0]["extensions"]["retryAfter"]))


def always_thirteen(view: View) -> dict[str, Any]:
    """Bid 13: the team's target is 13 or more, so it goes set by 130+ a hand and the game
    is over after two hands."""
    return {"kind": "TRICKS", "tricks": 13}


async def play_to_game_over(
    humans: Mapping[str, Api], table_id: str, timeout: float = 15.0
) -> View:
    """Humans (by seat; bots hold the other seats) play their turns until GAME_OVER, their
    team bidding itself set (about two hands); the last view of the first human."""
    choose = north_south_overbid if len(humans) > 1 else always_thirteen
    async with watching(humans, table_id) as watchers:
        last = await play_with_bots(
            humans, watchers, table_id, lambda u: u["view"]["phase"] == "GAME_OVER", choose
        )
    view: View = last["view"]
    return view


@asynccontextmanager
async def rematch_watch(api: Api, table_id: str) -> AsyncIterator[Watcher]:
    """A gameUpdates subscription whose views carry the rematch fields, past its
    SNAPSHOT."""
    async with api.subscribe(REMATCH_UPDATES, t=table_id) as queue:
        watcher = Watcher(queue)
        first = await watcher.next()
        assert first["event"] == "SNAPSHOT", first["event"]
        yield watcher
