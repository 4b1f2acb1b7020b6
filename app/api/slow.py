"""Slow consumers: a WebSocket client that stops reading must neither delay the others
nor make the server hold its updates without bound.

Each subscriber's updates wait in its own bounded broker queue (app/broker/base.py: an
overflow turns into a catch-up from the move log), and its sends into the socket's own
bounded write buffer; a send that cannot complete within the send timeout means the
client stopped reading. The connection is then closed with 4410, which tells the client
to reconnect and resubscribe with `since` (API.md), and nothing more is sent to it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from .transport.close_codes import CLOSE_TOO_SLOW

log = logging.getLogger("app.slow")

TOO_SLOW = CLOSE_TOO_SLOW
TOO_SLOW_REASON = "too slow: reconnect and resubscribe with since"


class SendGuard:
    """The sends of one connection, each bounded in time; the first one too slow closes
    the connection with 4410."""

    __slots__ = ("closing", "timeout")

    def __init__(self, timeout_s: float) -> None:
        self.timeout = timeout_s
        self.closing = False

    async def send(
        self, send: Coroutine[Any, Any, None], close: Callable[[int, str], Awaitable[None]]
    ) -> None:
        """Await `send`, at most the timeout; if it takes longer, close with 4410 (once:
        after that nothing is sent)."""
        if self.closing:
            send.close()  # never started
            return
        try:
            async with asyncio.timeout(self.timeout):
                await send
        except TimeoutError:
            if self.closing:
                return
            self.closing = True
            log.info("closing a WebSocket whose client stopped reading (4410)")
            await close(TOO_SLOW, TOO_SLOW_REASON)


class GuardedSends:
    """Mixin for strawberry's WebSocket protocol handlers (either protocol): every message
    goes through the connection's SendGuard, whose timeout is the server's setting."""

    context: Any
    websocket: Any
    _send_guard: SendGuard | None = None

    async def send_message(self, message: Any) -> None:
        """Send, closing with 4410 a connection whose client stopped reading."""
        guard = self._send_guard
        if guard is None:
            timeout = self.context.services.settings.ws_send_timeout_ms / 1000
            guard = self._send_guard = SendGuard(timeout)
        await guard.send(super().send_message(message), self.websocket.close)  # type: ignore[misc]
