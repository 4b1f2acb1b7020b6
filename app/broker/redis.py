"""The Redis pub/sub broker: events fanned out across server processes.

One pub/sub connection per process carries every channel that has a local
subscriber; a reader task dispatches to the local queues. `subscribe`
returns only once Redis has confirmed the subscription, so nothing
published afterwards is missed. When the connection drops, the broker
reconnects with backoff, resubscribes, and wakes every local subscriber
with RESYNC so it can catch up from the database.

A Redis message carries one or more encoded messages (`post`: the steps of one change
together) behind a header naming the process that sent it and a number. That
process keeps what it sent until Redis delivers it back, and then hands its subscribers
the very objects it published instead of decoding them again: only the other processes
decode. Everything still arrives in Redis's order.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections import OrderedDict
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
# What a process keeps of its own messages until Redis delivers them back (one entry per
# publish; a message Redis never delivers back, the connection having dropped, is let go
# once this many are newer).
OWN_KEPT = 1024
_SEPARATOR = b"\n"  # between the header and the first message, and between messages


def frame(header: bytes, encoded: list[bytes]) -> bytes:
    """A Redis message: the header, then each message's length and bytes."""
    parts = [header]
    for body in encoded:
        parts.append(b"%d" % len(body))
        parts.append(body)
    return _SEPARATOR.join(parts)


def _settle(
    batch: list[tuple[str, bytes, asyncio.Future[int] | None]], outcome: Exception | list[Any]
) -> None:
    """Tell whoever waits for a message of `batch` how its publishing went: the number of
    processes Redis handed it to, or the error."""
    for index, (_, _, out) in enumerate(batch):
        if out is not None and not out.done():
            if isinstance(outcome, Exception):
                out.set_exception(outcome)
            else:
                out.set_result(int(outcome[index]))


def unframe(data: bytes) -> tuple[bytes, list[bytes]]:
    """The header and the messages of a Redis message made by `frame`."""
    header, _, rest = data.partition(_SEPARATOR)
    bodies = []
    while rest:
        size, _, rest = rest.partition(_SEPARATOR)
        length = int(size)
        bodies.append(rest[:length])
        rest = rest[length + 1 :]
    return header, bodies


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
        # This process's messages in flight, by number, for when Redis delivers them back.
        self._origin = secrets.token_hex(8).encode()
        self._sent = 0
        self._own: OrderedDict[int, list[T]] = OrderedDict()
        self._outbox: list[tuple[str, bytes, asyncio.Future[int] | None]] = []
        self._flusher: asyncio.Task[None] | None = None

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
        """Publish what is still queued (briefly), stop reading and disconnect."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.flushed(), 2)
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
        """Publish to every process, after what was posted before. Raises RedisError when
        Redis is unreachable."""
        assert self._publisher is not None, "broker not started"
        out: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue(channel, [message], out)
        await out

    async def post(self, channel: str, messages: list[T]) -> None:
        """Queue `messages` to be published, in order, in one Redis message; whatever is
        queued goes out in one pipelined trip, by one task, in the order queued."""
        self._queue(channel, messages, None)

    def _queue(self, channel: str, messages: list[T], out: asyncio.Future[int] | None) -> None:
        self._outbox.append((PREFIX + channel, self._framed(channel, messages), out))
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush())

    def _framed(self, channel: str, messages: list[T]) -> bytes:
        """The Redis message of `messages`; kept as they are until Redis delivers them
        back, if this process listens to `channel`."""
        self._sent += 1
        number = self._sent
        if channel in self._channels:
            own = self._own
            own[number] = messages
            if len(own) > OWN_KEPT:
                own.popitem(last=False)
        return frame(b"%s:%d" % (self._origin, number), [self._encode(m) for m in messages])

    async def _flush(self) -> None:
        try:
            while self._outbox and self._publisher is not None:
                batch, self._outbox = self._outbox, []
                pipeline = self._publisher.pipeline(transaction=False)
                for channel, data, _ in batch:
                    pipeline.publish(channel, data)
                try:
                    receivers = await pipeline.execute()
                except Exception as error:
                    # Posted messages are lost: other processes' subscribers see the gap at
                    # the next version (or a RESYNC when the connection comes back) and
                    # catch up. A publish waiting for its message gets the error.
                    if not any(out is not None for _, _, out in batch):
                        log.warning("could not publish %d messages", len(batch), exc_info=True)
                    _settle(batch, error)
                else:
                    _settle(batch, receivers)
        finally:
            self._flusher = None

    async def flushed(self) -> None:
        """Wait until everything posted so far is out (tests, shutdown)."""
        while self._flusher is not None:
            await asyncio.shield(self._flusher)

    async def publish_counted(self, channel: str, message: T) -> int:
        """Publish, after what was posted before; the number of processes subscribed to
        `channel` (one pub/sub connection each) that Redis handed the message to."""
        assert self._publisher is not None, "broker not started"
        out: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._queue(channel, [message], out)
        return await out

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
        try:
            messages = self._messages(item["data"], decode=bool(subscribers))
        except Exception:  # a malformed message must not stop the reader
            log.exception("undecodable message on %s", channel)
            return
        if not subscribers:
            return
        for message in messages:
            for subscription in tuple(subscribers):
                subscription.deliver(message)

    def _messages(self, data: bytes, decode: bool) -> list[T]:
        """The messages of one Redis message: this process's own objects if it sent them
        (and still has them), else decoded (when `decode`: someone here listens)."""
        header, bodies = unframe(data)
        origin, _, number = header.partition(b":")
        if origin == self._origin:
            own = self._own.pop(int(number), None)
            if own is not None:
                return own
        return [self._decode(body) for body in bodies] if decode else []
