"""uvicorn's websockets-sansio protocol, lighter per connection.

An idle subscribed socket is mostly what its connection keeps (its subscription parks:
app/services/live/followed.py), and uvicorn gives each connection an asyncio.Queue for
its received events and an asyncio.Event for "the transport may be written to": three
deques and an Event for the queue, an Event for the other, each deque ~0.7 KiB before
anything is in it. One reader and one flag need none of that: a list and a future
made only while someone waits.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol


class ReceivedEvents:
    """The events received for the ASGI app, in order, for its one reader (the part of
    asyncio.Queue that uvicorn's protocol uses: put_nowait, get, empty)."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[Any] = []
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: Any) -> None:
        """Queue an event, waking the reader."""
        self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    async def get(self) -> Any:
        """The oldest event, once there is one."""
        while not self._items:
            waiter = self._waiter = asyncio.get_running_loop().create_future()
            try:
                await waiter
            finally:
                self._waiter = None
        return self._items.pop(0)

    def empty(self) -> bool:
        """Whether no event is queued."""
        return not self._items

    def qsize(self) -> int:
        """How many events are queued."""
        return len(self._items)


class Flag:
    """asyncio.Event's set, clear, is_set and wait, with a future only while waited on."""

    # `value` is public so the socket writer reads it without a call per frame.
    __slots__ = ("_waiters", "value")

    def __init__(self, value: bool = False) -> None:
        self.value = value
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        """Whether it is set."""
        return self.value

    def set(self) -> None:
        """Set it, waking whoever waits."""
        self.value = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        """Clear it."""
        self.value = False

    async def wait(self) -> bool:
        """Return once it is set."""
        if self.value:
            return True
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        try:
            await waiter
        finally:
            if self._waiters is not None and waiter in self._waiters:
                self._waiters.remove(waiter)  # cancelled: not kept until the next set()
        return True


class LeanWebSocketProtocol(WebSocketsSansIOProtocol):
    """WebSocketsSansIOProtocol with `ReceivedEvents` for its queue and a `Flag` for
    `writable` (the server's `ws` protocol: app/api/app.py)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue = ReceivedEvents()  # type: ignore[assignment]
        self.writable = Flag(True)  # type: ignore[assignment]
