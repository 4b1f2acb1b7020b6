"""The live chat stream across a broker RESYNC (a Redis reconnect, an overflow): it
catches up from the stored messages with exactly what it missed, once each, and never
with what was sent before it began (CI once saw a stream on the second of two processes
receive its first marker after later messages: the catch-up after a reconnect had
reached back before the stream's subscription)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from app.broker.base import Subscription
from app.broker.memory import MemoryBroker
from app.services.chat import service as chat_service
from app.services.chat.model import ChatChannel, ChatMessage, chat_channel
from app.services.container import Services
from app.services.social.model import Viewer
from app.services.tables.snapshot import Visibility
from app.settings import Settings


class Broker(MemoryBroker[Any]):
    """The in-process broker, keeping every subscription it made (to resync them, as the
    Redis broker does when its connection comes back) and able to lose a publication."""

    def __init__(self) -> None:
        super().__init__()
        self.made: list[Subscription[Any]] = []
        self.losing = False

    async def subscribe(self, *channels: str) -> Subscription[Any]:
        subscription = await super().subscribe(*channels)
        self.made.append(subscription)
        return subscription

    async def publish(self, channel: str, message: Any) -> None:
        if self.losing:
            raise ConnectionError("the broker is away")  # ChatService.send logs it
        await super().publish(channel, message)

    def resync(self, channel: str) -> None:
        """What the Redis broker does for each of a channel's subscriptions once Redis
        confirms the channel again after a reconnect."""
        for subscription in self.made:
            if channel in subscription.channels:
                subscription.resync()


class Clock:
    """The chat service's clock, set by the test: every message is sent at the same
    instant unless the test moves it (the stream must not tell old messages from new ones
    by the clock; two processes' clocks need not agree either)."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Reader:
    """A chatMessages stream of one spectator, read one message at a time."""

    def __init__(self, stream: AsyncIterator[ChatMessage]) -> None:
        self.stream = stream
        self.pending: asyncio.Task[ChatMessage] | None = None

    def ask(self) -> None:
        """Start waiting for the next message."""
        self.pending = asyncio.ensure_future(anext(self.stream))

    async def text(self) -> str:
        """The next message's text."""
        if self.pending is None:
            self.ask()
        assert self.pending is not None
        message = await self.pending
        self.pending = None
        return message.text

    async def close(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
            await asyncio.gather(self.pending, return_exceptions=True)
        await self.stream.aclose()  # type: ignore[attr-defined]


class Talk:
    """A public table, its host (seated: writes PLAYERS) and a spectator's chat stream."""

    def __init__(self, services: Services, broker: Broker, clock: Clock) -> None:
        self.services = services
        self.broker = broker
        self.clock = clock
        self.table_id = ""
        self.host: Viewer | None = None
        self.reader: Reader | None = None

    async def open(self) -> None:
        self.host = await signed_up(self.services, "host")
        spectator = await signed_up(self.services, "fan")
        table = await self.services.tables.create(self.host, "talk", Visibility.PUBLIC, None, True)
        self.table_id = table.id
        self.reader = Reader(self.services.chat.messages(spectator, table.id))

    async def subscribe(self) -> None:
        """Start the stream and wait until it listens on the table's chat."""
        assert self.reader is not None
        self.reader.ask()
        channel = chat_channel(self.table_id)
        await reaches(lambda: self.broker.subscriber_count(channel) == 1)

    async def say(self, text: str) -> None:
        assert self.host is not None
        await self.services.chat.send(self.host, self.table_id, ChatChannel.PLAYERS, text)

    async def heard(self) -> str:
        assert self.reader is not None
        return await self.reader.text()

    def reconnect(self) -> None:
        """Redis came back: the stream is resynced once per channel it listens on (its
        table's chat and its player's channel)."""
        for subscription in self.broker.made:
            if chat_channel(self.table_id) in subscription.channels:
                for channel in subscription.channels:
                    self.broker.resync(channel)


@pytest.fixture
async def talk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Talk]:
    settings = Settings(
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'chat.db'}",
        argon2_time_cost=1,
        argon2_memory_kib=1024,
        rate_limits=False,
        log_level="warning",
    )
    clock = Clock()
    monkeypatch.setattr(chat_service, "now_ts", clock)
    broker = Broker()
    services = Services(settings, broker)
    await services.start()
    talk = Talk(services, broker, clock)
    try:
        await talk.open()
        yield talk
    finally:
        if talk.reader is not None:
            await talk.reader.close()
        await services.stop()


async def signed_up(services: Services, name: str) -> Viewer:
    _, player = await services.auth.sign_up(name, "pw123456")
    return await services.social.viewer(player)


async def reaches(condition: Callable[[], bool]) -> None:
    """Let the other tasks run until `condition` holds (no clock involved)."""
    for _ in range(10_000):
        if condition():
            return
        await asyncio.sleep(0)
    raise AssertionError("never reached")


async def test_a_resync_never_brings_what_was_sent_before_the_stream_began(talk: Talk) -> None:
    await talk.say("before the stream")
    await talk.subscribe()
    await talk.say("live")
    assert await talk.heard() == "live"
    talk.reconnect()
    await talk.say("after the reconnect")
    assert await talk.heard() == "after the reconnect"


async def test_a_resync_brings_what_was_missed_once_in_order(talk: Talk) -> None:
    await talk.subscribe()
    await talk.say("live")
    assert await talk.heard() == "live"
    talk.broker.losing = True
    await talk.say("missed 1")  # stored, never published
    await talk.say("missed 2")
    talk.broker.losing = False
    talk.reconnect()
    await talk.say("after the reconnect")
    assert await talk.heard() == "missed 1"
    assert await talk.heard() == "missed 2"
    assert await talk.heard() == "after the reconnect"
    talk.reconnect()  # nothing missed since: nothing again
    await talk.say("last")
    assert await talk.heard() == "last"


async def test_a_resync_brings_what_was_missed_whatever_the_senders_clocks(talk: Talk) -> None:
    await talk.subscribe()
    await talk.say("live, from a process whose clock is ahead")
    await talk.heard()
    talk.clock.now -= 5  # the next sender's process: its clock five seconds behind
    talk.broker.losing = True
    await talk.say("missed")
    talk.broker.losing = False
    talk.clock.now += 5
    talk.reconnect()
    await talk.say("after the reconnect")
    assert await talk.heard() == "missed"
    assert await talk.heard() == "after the reconnect"
