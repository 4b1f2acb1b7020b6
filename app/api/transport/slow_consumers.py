"""Slow consumers: a WebSocket client that stops reading must neither delay the others
nor make the server hold its updates without bound.

Every message of a connection goes through its SocketWriter (app/api/transport/writer.py):
a bounded outbox, and a send that cannot complete within the send timeout means the
client stopped reading. The connection is then closed with 4410, which tells the client
to reconnect and resubscribe with `since` (docs/api.md), and nothing more is sent to it. A
table's live updates (app/services/live/table_feeds.py) are written to the same writer, after
whatever the connection sent before."""

from __future__ import annotations

from typing import Any

from app.api.transport.close_codes import CLOSE_TOO_SLOW
from app.api.transport.writer import TOO_SLOW_REASON, SocketWriter

TOO_SLOW = CLOSE_TOO_SLOW
__all__ = ["TOO_SLOW", "TOO_SLOW_REASON", "GuardedSends"]


class GuardedSends:
    """Mixin for strawberry's WebSocket protocol handlers (either protocol): every message
    goes through the connection's SocketWriter, whose timeout is the server's setting."""

    context: Any
    websocket: Any
    view: Any
    _writer: SocketWriter | None = None

    @property
    def writer(self) -> SocketWriter:
        """The connection's writer (made on first use)."""
        writer = self._writer
        if writer is None:
            timeout = self.context.services.settings.ws_send_timeout_ms / 1000
            socket = self.websocket.ws  # starlette's WebSocket under strawberry's adapter
            writer = self._writer = SocketWriter(
                socket.send_text,
                self.websocket.close,
                timeout,
                protocol=self.direct_protocol(),
            )
        return writer

    def direct_protocol(self) -> Any:
        """The ASGI server's protocol that frames may be written to directly, skipping
        the ASGI send chain (the fast path's: app/api/fastpath/parking.py); None here."""
        return None

    def close_writer(self) -> None:
        """The connection ended: nothing more is written."""
        if self._writer is not None:
            self._writer.close()

    async def send_message(self, message: Any) -> None:
        """Send after everything written before, closing with 4410 a connection whose
        client stopped reading."""
        encoded = self.view.encode_json(message)
        if isinstance(encoded, bytes):
            encoded = encoded.decode()
        await self.writer.send(encoded)
