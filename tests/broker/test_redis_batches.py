"""The Redis broker's messages: the steps of one change in one Redis message, in order
with what is published otherwise, and the process that published them handed its own
objects back without decoding."""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from app.broker.redis import RedisBroker, frame, unframe
from tests.support.services import redis_url


@given(st.binary(max_size=20).filter(lambda h: b"\n" not in h), st.lists(st.binary()))
def test_a_framed_message_unframes_to_its_header_and_bodies(
    header: bytes, bodies: list[bytes]
) -> None:
    assert unframe(frame(header, bodies)) == (header, bodies)


class Counting:
    """JSON coding that counts what it decodes."""

    def __init__(self) -> None:
        self.decoded = 0

    def encode(self, message: Any) -> bytes:
        return json.dumps(message).encode()

    def decode(self, data: bytes) -> Any:
        self.decoded += 1
        return json.loads(data)


async def received(subscription: Any, count: int) -> list[Any]:
    return [await asyncio.wait_for(subscription.get(), 5) for _ in range(count)]


async def test_the_publisher_gets_its_own_objects_and_the_others_decode_them() -> None:
    url = redis_url()
    here_codec, there_codec = Counting(), Counting()
    here = RedisBroker(url, here_codec.encode, here_codec.decode)
    there = RedisBroker(url, there_codec.encode, there_codec.decode)
    await here.start()
    await there.start()
    channel = f"batch-{uuid.uuid4().hex}"
    try:
        with await here.subscribe(channel) as mine, await there.subscribe(channel) as theirs:
            steps = [{"step": 1}, {"step": 2, "text": "a\nb 12\n"}, {"step": 3}]
            alone = {"step": 4}
            await here.post(channel, steps)
            await here.publish(channel, alone)
            got_here = await received(mine, 4)
            got_there = await received(theirs, 4)
        sent = [*steps, alone]
        assert all(a is b for a, b in zip(got_here, sent, strict=True))
        assert got_there == sent
        assert here_codec.decoded == 0 and there_codec.decoded == 4
        assert not here._own  # handed back, so let go of
    finally:
        await here.close()
        await there.close()


async def test_a_publisher_with_no_listener_keeps_nothing_of_what_it_sent() -> None:
    codec = Counting()
    broker = RedisBroker(redis_url(), codec.encode, codec.decode)
    await broker.start()
    try:
        await broker.post(f"nobody-{uuid.uuid4().hex}", [{"a": 1}, {"b": 2}])
        await broker.flushed()
        assert not broker._own and not broker._outbox
    finally:
        await broker.close()
