"""The one ordered way out of a WebSocket connection: every message of either protocol
(acks, results, errors, the live updates a table's feed writes) goes through the
connection's SocketWriter, in the order written.

A frame is written at once while the socket takes it; otherwise it waits in a bounded
outbox that one drain empties. A client that stops reading is closed with 4410 ("too
slow: reconnect and resubscribe with since", docs/api.md) when a frame has waited longer than
the send timeout or the outbox overflows; nothing more is sent to it, and nobody else
waits for it.

Under uvicorn's websockets-sansio protocol, a server frame (unmasked, uncompressed) is the
same bytes for every socket, so a `Frame` shared by many subscribers is framed once and
written straight to each transport (`transport.write`), skipping the per-socket ASGI
send chain; any other ASGI server gets the text through the ASGI `send` as usual.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

from app.api.transport.close_codes import CLOSE_TOO_SLOW

log = logging.getLogger("app.slow")

TOO_SLOW_REASON = "too slow: reconnect and resubscribe with since"
# Frames one socket may have waiting; a live table makes a few per second, so a client
# this far behind has stopped reading (the send timeout usually fires first).
OUTBOX_LIMIT = 512

_FIN_TEXT = 0x81
# Tasks started from synchronous writes, held until done (the loop keeps only weak ones).
_BACKGROUND: set[asyncio.Task[None]] = set()


def _start(work: Coroutine[Any, Any, None]) -> None:
    task = asyncio.get_running_loop().create_task(work)
    _BACKGROUND.add(task)
    task.add_done_callback(_BACKGROUND.discard)


class Frame:
    """A message's JSON text, and its WebSocket frame (`wire`: the whole server-to-client
    text frame, FIN, unmasked, no extension) built with it once for all its sockets: a
    frame is only made to be written."""

    __slots__ = ("text", "wire")

    def __init__(self, text: str) -> None:
        self.text = text
        self.wire = frame_bytes(text.encode())


def frame_bytes(payload: bytes) -> bytes:
    """An unmasked, unfragmented text frame carrying `payload` (RFC 6455, 5.2)."""
    size = len(payload)
    if size < 126:
        head = bytes((_FIN_TEXT, size))
    elif size < 1 << 16:
        head = bytes((_FIN_TEXT, 126)) + size.to_bytes(2, "big")
    else:
        head = bytes((_FIN_TEXT, 127)) + size.to_bytes(8, "big")
    return head + payload


def raw_protocol(send: object) -> Any:
    """uvicorn's websockets-sansio protocol behind an ASGI `send`, when frames can be
    written to its transport directly (no compression negotiated); else None."""
    protocol = getattr(send, "__self__", None)
    if not isinstance(protocol, WebSocketsSansIOProtocol):
        return None
    conn = getattr(protocol, "conn", None)
    if conn is None or getattr(conn, "extensions", None):
        return None
    return protocol


Item = Frame | str | asyncio.Future[None]


class SocketWriter:
    """The outgoing messages of one WebSocket, in order, bounded in time and in number."""

    __slots__ = (
        "_close",
        "_draining",
        "_outbox",
        "_protocol",
        "_send_text",
        "closing",
        "limit",
        "timeout",
    )

    def __init__(
        self,
        send_text: Callable[[str], Awaitable[None]],
        close: Callable[[int, str], Awaitable[None]],
        timeout_s: float,
        protocol: Any = None,
        limit: int = OUTBOX_LIMIT,
    ) -> None:
        self._send_text = send_text
        self._close = close
        self._protocol = protocol
        # Made when first needed and dropped once drained: most sockets write straight
        # to the transport, and an empty deque is ~0.7 KiB per idle socket.
        self._outbox: deque[Item] | None = None
        self._draining = False
        self.timeout = timeout_s
        self.limit = limit
        self.closing = False

    def write(self, frame: Frame | str) -> None:
        """Write now if the socket takes it, else queue it (a live update: nobody waits
        for it). An outbox that overflows closes the socket with 4410."""
        if self.closing:
            return
        if not self._outbox and not self._draining and self._direct(frame):
            return
        outbox = self._queue()
        if len(outbox) >= self.limit:
            self._too_slow_soon()
            return
        outbox.append(frame)
        if not self._draining:
            self._draining = True
            _start(self._drain())

    async def send(self, frame: Frame | str) -> None:
        """Write `frame` after everything written before it, and wait until it is out
        (or the connection is closing)."""
        if self.closing:
            return
        if not self._outbox and not self._draining:
            if self._direct(frame):
                return
            self._draining = True
            self._queue().append(frame)
            await self._drain()
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        outbox = self._queue()
        outbox.append(frame)
        outbox.append(done)
        await done

    def _queue(self) -> deque[Item]:
        outbox = self._outbox
        if outbox is None:
            outbox = self._outbox = deque()
        return outbox

    def _direct(self, frame: Frame | str) -> bool:
        """Write `frame` to the transport now, if the fast path is there and writable."""
        protocol = self._protocol
        if protocol is None or protocol.close_sent or protocol.disconnected:
            return False
        if not protocol.writable.value or not protocol.handshake_complete:
            return False
        wire = frame.wire if isinstance(frame, Frame) else frame_bytes(frame.encode())
        protocol.transport.write(wire)
        return True

    async def _send_one(self, frame: Frame | str) -> None:
        protocol = self._protocol
        if protocol is not None:
            await protocol.writable.wait()
            if self._direct(frame):
                return
        await self._send_text(frame.text if isinstance(frame, Frame) else frame)

    async def _drain(self) -> None:
        outbox = self._queue()
        try:
            while outbox and not self.closing:
                item = outbox[0]
                if isinstance(item, asyncio.Future):
                    outbox.popleft()
                    if not item.done():
                        item.set_result(None)
                    continue
                try:
                    async with asyncio.timeout(self.timeout):
                        await self._send_one(item)
                except TimeoutError:
                    await self._too_slow()
                    return
                except Exception:  # the client went away: the connection is ending
                    self.closing = True
                    return
                if outbox:  # else released while it was being sent (closing)
                    outbox.popleft()
        finally:
            self._draining = False
            if self.closing:
                self._release()
            elif not outbox and self._outbox is outbox:
                self._outbox = None

    def _release(self) -> None:
        """Drop what waits, and let every sender waiting for its frame go on."""
        outbox, self._outbox = self._outbox, None
        if outbox is None:
            return
        for item in outbox:
            if isinstance(item, asyncio.Future) and not item.done():
                item.set_result(None)
        outbox.clear()  # a drain under way holds it too

    def _too_slow_soon(self) -> None:
        self.closing = True
        self._release()
        _start(self._close_too_slow())

    async def _too_slow(self) -> None:
        if self.closing:
            return
        self.closing = True
        self._release()
        await self._close_too_slow()

    async def _close_too_slow(self) -> None:
        log.info("closing a WebSocket whose client stopped reading (4410)")
        with contextlib.suppress(Exception):
            await self._close(CLOSE_TOO_SLOW, TOO_SLOW_REASON)

    def close(self) -> None:
        """The connection ended: nothing more is written."""
        self.closing = True
        self._release()
