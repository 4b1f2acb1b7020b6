"""uvicorn's httptools protocol, writing a response's head with its body.

uvicorn writes a response's status line and headers as soon as the app starts the
response, then its body: two writes, two `send` system calls and, with TCP_NODELAY,
two segments for the client to read, for every move answered over POST. On loopback a
send also runs the receiver's side of TCP, which made these writes a visible share of a
move's CPU. Here a response whose length is known (a `content-length`, as every
starlette Response has) keeps its head until the first part of its body and writes the
two at once. A streamed response (chunked, or no body length) is written as uvicorn
writes it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle


class _Holding:
    """A transport that keeps what is written (the head) instead of sending it."""

    __slots__ = ("data", "transport")

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.data = b""

    def write(self, data: bytes) -> None:
        """Keep `data` for later."""
        self.data += data

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class _Joining:
    """A transport whose first write is sent after the head it was given."""

    __slots__ = ("head", "transport")

    def __init__(self, transport: asyncio.Transport, head: bytes) -> None:
        self.transport = transport
        self.head = head

    def write(self, data: bytes) -> None:
        """Send the head and `data` in one write (later writes go straight through)."""
        head, self.head = self.head, b""
        self.transport.write(head + data if head else data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class CorkedCycle(RequestResponseCycle):
    """uvicorn's request/response cycle, holding a sized response's head for its body."""

    _head: bytes | None = None

    async def send(self, message: Any) -> None:
        """uvicorn's `send`, with the head of a sized response written with its body."""
        kind = message["type"]
        if kind == "http.response.start" and not self.response_started:
            await self._start(message)
            return
        head = self._head
        if head is None or kind != "http.response.body":
            await super().send(message)
            return
        self._head = None
        transport = self.transport
        joining = _Joining(transport, head)
        self.transport = joining  # type: ignore[assignment]
        try:
            await super().send(message)
        finally:
            self.transport = transport
            # Nothing of the body was written (a HEAD request's answer, or uvicorn
            # refused the message): the head goes alone, as uvicorn wrote it.
            if joining.head and not self.disconnected:
                transport.write(joining.head)

    async def _start(self, message: Any) -> None:
        transport = self.transport
        holding = _Holding(transport)
        self.transport = holding  # type: ignore[assignment]
        try:
            await super().send(message)
        finally:
            self.transport = transport
        if not holding.data:
            return
        if self.chunked_encoding is False and not self.disconnected:
            self._head = holding.data
        else:  # streamed: written now, as uvicorn does
            transport.write(holding.data)


class CorkedHttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol whose responses are written by a CorkedCycle."""

    def on_headers_complete(self) -> None:
        """uvicorn's, then the new cycle (not yet running) made a CorkedCycle."""
        super().on_headers_complete()
        cycle = self.cycle
        # The cycle's task has been created but has not run: its `send` is looked up
        # when it starts, on the class set here. (An upgrade makes no new cycle.)
        if type(cycle) is RequestResponseCycle:
            cycle.__class__ = CorkedCycle
