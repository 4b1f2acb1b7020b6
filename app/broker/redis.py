"""The Redis pub/sub broker: events fanned out across server processes.

One pub/sub connection per process carries every channel that has a local
subscriber; a reader task dispatches to the local queues. `subscribe`
returns only once Redis has confirmed the subscription, so nothing
published afterwards is missed. When the connection drops, the broker
reconnects with backoff, resubscribes, and wakes every local subscriber
with RESYNC so it can catch up from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any, TypeVar

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from app.broker.base import Broker, Subscription

T = TypeVar("T")
log = logging.getLogger(__name__)

PREFIX = "spades:"
MAX_BACKOFF = 2.0


class RedisBroker(Broker[T]):
    """Publishes encoded messages to Redis and dispatches received ones locally."""

    def __init__(
        self, url: str, encode: Callable[[T], bytes], decode: Callable[[bytes], T]
    ) -> None:
        self.url = url
        self._encode = encode
        self._decode = decode
        self._publisher: Redis | None = None
        self._pubsub: PubSub | None = None
        self._channels: dict[str, set[Subscription[T]]] = {}
        self._confirmations: dict[str, asyncio.Future[None]] = {}
        # Channels whose subscribers resynchronise when Redis confirms them (a reconnect).
        self._resync_on_confirm: set[str] = set()
        self._reader: asyncio.Task[None] | None = None
        self._connected = asyncio.Event()
        self._closing = False
        self._lock = asyncio.Lock()

    @property
    def healthy(self) -> bool:
        """Connected to Redis right now."""
        return self._connected.is_set()

    async def start(self) -> None:
        """Connect (the reader task keeps reconnecting after failures)."""
        self._publisher = Redis.from_url(self.url, socket_connect_timeout=2, socket_timeout=5)
        self._reader = asyncio.create_task(self._read_forever())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._connected.wait(), 5)

    async def close(self) -> None:
        """Stop reading and disconnect."""
        self._closing = True
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
        if self._publisher is not None:
            with contextlib.suppress(Exception):
                await self._publisher.aclose()

    async def publish(self, channel: str, message: T) -> None:
        """Publish to every process. Raises RedisError when Redis is unreachable."""
        assert self._publisher is not None, "broker not started"
        await self._publisher.publish(PREFIX + channel, self._encode(message))

    async def publish_counted(self, channel: str, message: T) -> int:
        """Publish; the number of processes subscribed to `channel` (one pub/sub connection
        each) that Redis handed the message to."""
        assert self._publisher is not None, "broker not started"
        return int(await self._publisher.publish(PREFIX + channel, self._encode(message)))

    async def subscribe(self, *channels: str) -> Subscription[T]:
        """Register locally, then wait for Redis to confirm any new channel."""
        subscription: Subscription[T] = Subscription(channels, self._remove)
        waits = []
        for channel in channels:
            local = self._channels.setdefault(channel, set())
            local.add(subscription)
            # Every subscriber waits for the confirmation (shared; instant once given):
            # a second one in the same tick would otherwise return before it is sent.
            waits.append(self._ensure_subscribed(channel))
        try:
            await asyncio.gather(*waits)
        except BaseException:
            subscription.close()
            raise
        return subscription

    async def _ensure_subscribed(self, channel: str) -> None:
        future = self._confirmations.get(channel)
        if future is None:
            future = asyncio.get_running_loop().create_future()
            self._confirmations[channel] = future
            await self._connected.wait()
            if self._pubsub is not None:
                # On failure the reader reconnects and resubscribes every local channel.
                with contextlib.suppress(RedisError):
                    await self._pubsub.subscribe(PREFIX + channel)
        await asyncio.wait_for(asyncio.shield(future), 10)

    def _remove(self, subscription: Subscription[T]) -> None:
        for channel in subscription.channels:
            local = self._channels.get(channel)
            if local is None:
                continue
            local.discard(subscription)
            if not local:
                del self._channels[channel]
                self._confirmations.pop(channel, None)
                if self._pubsub is not None and self._connected.is_set():
                    task = asyncio.get_running_loop().create_task(self._unsubscribe(channel))
                    task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def _unsubscribe(self, channel: str) -> None:
        with contextlib.suppress(RedisError):
            if channel not in self._channels and self._pubsub is not None:
                await self._pubsub.unsubscribe(PREFIX + channel)

    async def _read_forever(self) -> None:
        backoff = 0.05
        first = True
        while not self._closing:
            try:
                await self._connect(resync=not first)
                first = False
                backoff = 0.05
                await self._read()
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                log.warning("redis broker connection lost: %s", exc)
            self._connected.clear()
            if self._closing:
                return
            await asyncio.sleep(backoff)
            backoff = min(MAX_BACKOFF, backoff * 2)

    async def _connect(self, resync: bool) -> None:
        """Connect and resubscribe every local channel. After a reconnect, each channel's
        subscribers are told to resynchronise once Redis confirms it again (not before:
        a catch-up read earlier could miss a message published in between)."""
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                await self._pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
        client = Redis.from_url(self.url, socket_connect_timeout=2)
        pubsub = client.pubsub()
        await pubsub.ping()
        self._pubsub = pubsub
        pending = list(self._channels)
        loop = asyncio.get_running_loop()
        for channel in pending:
            future = self._confirmations.get(channel)
            if future is None or future.done():
                self._confirmations[channel] = loop.create_future()
        if resync:
            self._resync_on_confirm.update(pending)
        if pending:
            await pubsub.subscribe(*(PREFIX + c for c in pending))
        self._connected.set()

    def _resync(self, channel: str) -> None:
        for subscription in tuple(self._channels.get(channel, ())):
            subscription.resync()

    async def _read(self) -> None:
        assert self._pubsub is not None
        pubsub = self._pubsub
        while True:
            item = await pubsub.get_message(timeout=1.0)
            if item is None:
                if not pubsub.connection or not pubsub.connection.is_connected:
                    await pubsub.ping()  # raises if the connection is gone
                continue
            self._dispatch(item)

    def _dispatch(self, item: dict[str, Any]) -> None:
        kind = item.get("type")
        raw_channel = item.get("channel")
        channel = raw_channel.decode() if isinstance(raw_channel, bytes) else str(raw_channel)
        channel = channel.removeprefix(PREFIX)
        if kind == "subscribe":
            future = self._confirmations.get(channel)
            if future is not None and not future.done():
                future.set_result(None)
            if channel in self._resync_on_confirm:
                self._resync_on_confirm.discard(channel)
                self._resync(channel)
            return
        if kind != "message":
            return
        subscribers = self._channels.get(channel)
        if not subscribers:
            return
        try:
            message = self._decode(item["data"])
        except Exception:  # a malformed message must not stop the reader
            log.exception("undecodable message on %s", channel)
            return
        for subscription in tuple(subscribers):
            subscription.deliver(message)
