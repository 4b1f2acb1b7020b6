"""Parking: a `gameUpdates` operation with nothing to do waits with no task
(app/services/live/followed.py), on either WebSocket protocol.

Each operation's task knows its LiveOperation (app/api/fastpath/live.py), through which
its table's feed writes its live updates; one that parks ends its task without
completing, and a change handed back runs it again. These handlers are the protocol
handlers of app/api/transport/websocket.py with that added; they also write shared frames
straight to uvicorn's transport and let go of the handshake's headers once a connection
is acknowledged. The seam (app/api/fastpath/__init__.py) picks them when the fast path
is on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from typing import Any

from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    _OperationStreamClosed as OperationStreamClosed,
)
from strawberry.subscriptions.protocols.graphql_ws.types import CompleteMessage

from app.api.fastpath.live import LIVE_OPERATION, LiveOperation
from app.api.transport.websocket import CheckedTransportWSHandler, LegacyWSHandler
from app.api.transport.writer import SocketWriter, raw_protocol


def release_handshake(adapter: Any) -> None:
    """Once a connection is acknowledged (its token read from the upgrade request or the
    connection_init), drop what only the handshake needed and the ASGI server and
    starlette would otherwise keep for the connection's life: the request's headers
    (scope, starlette's parsed copy) and uvicorn's handshake request and response."""
    socket = getattr(adapter, "ws", None)
    if socket is None:
        return
    socket.scope["headers"] = []
    vars(socket).pop("_headers", None)
    protocol = raw_protocol(getattr(socket, "_send", None))
    if protocol is not None and protocol.handshake_complete:
        # The websockets parser's generator keeps the request in its frame for the
        # connection's life: only its headers can be let go of.
        for message in (protocol.request, protocol.response):
            headers = getattr(message, "headers", None)
            if headers is not None:
                headers.clear()
        protocol.request = protocol.response = None


_PARKED: dict[asyncio.AbstractEventLoop, asyncio.Future[None]] = {}


def parked_task() -> Any:
    """What a parked operation's handler keeps as its task (to cancel, to await): one
    finished future per event loop, not the finished task, which would keep its
    coroutine and context for as long as the operation stays parked."""
    loop = asyncio.get_running_loop()
    done = _PARKED.get(loop)
    if done is None:
        done = _PARKED[loop] = loop.create_future()
        done.set_result(None)
    return done


class LiveOperations:
    """Mixin for both protocol handlers: each operation's task knows its LiveOperation
    (app/api/fastpath/live.py), through which a table's feed writes its live updates; an operation
    that completes, is stopped, or whose connection ends gets nothing more written."""

    _live_operations: dict[str, LiveOperation] | None = None
    _writer: SocketWriter | None
    writer: SocketWriter
    websocket: Any

    def direct_protocol(self) -> Any:
        """uvicorn's protocol under this connection, for frames written straight to its
        transport (app/api/transport/writer.py), when it can take them."""
        socket = self.websocket.ws  # starlette's WebSocket under strawberry's adapter
        return raw_protocol(getattr(socket, "_send", None))

    def handshake_done(self) -> None:
        """Let go of what only the handshake needed."""
        release_handshake(self.websocket)

    def start_live(
        self, operation_id: str, kind: str, restart: Callable[[], None] | None = None
    ) -> LiveOperation:
        """Register the operation running in the current task as able to take frames (the
        one already registered if this run resumes it: app/api/fastpath/live.py); `restart` runs
        it again once parked."""
        operations = self._live_operations
        if operations is None:
            operations = self._live_operations = {}
        live = operations.get(operation_id)
        if live is None or live.parked is None:
            live = operations[operation_id] = LiveOperation(self.writer, operation_id, kind)
        live.restart = restart
        live.runs += 1
        LIVE_OPERATION.set(live)
        return live

    def end_live(self, operation_id: str, live: LiveOperation | None = None) -> None:
        """Nothing more is written for the operation (`live`: only if still that one), and
        what it held while parked is let go."""
        operations = self._live_operations
        current = operations.get(operation_id) if operations else None
        if current is not None and (live is None or current is live):
            del operations[operation_id]  # type: ignore[union-attr]
            current.release()
        elif live is not None:
            live.release()

    def is_parked(self, operation_id: str) -> bool:
        """Whether the operation waits with no task (app/api/fastpath/live.py)."""
        live = (self._live_operations or {}).get(operation_id)
        return live is not None and live.parked is not None

    def end_all_live(self) -> None:
        """The connection ended: no operation takes frames any more."""
        operations, self._live_operations = self._live_operations or {}, None
        for live in operations.values():
            live.release()
        self.close_writer()  # type: ignore[attr-defined]


class ParkingTransportWSHandler(LiveOperations, CheckedTransportWSHandler):
    """graphql-transport-ws whose `gameUpdates` operations may park."""

    async def run_operation(self, operation: Any) -> None:
        live = self.start_live(operation.id, "next", partial(self._restart, operation))
        run = live.runs
        try:
            await super().run_operation(operation)
        finally:
            # Parked, or already run again: that run ends it.
            if live.parked_by(run):
                if operation.task is asyncio.current_task():
                    operation.task = parked_task()
            elif live.runs == run:
                self.end_live(operation.id, live)

    async def _send_result_stream(self, operation: Any, result_source: Any) -> None:
        await super()._send_result_stream(operation, result_source)
        live = LIVE_OPERATION.get()
        if live is not None and live.parked_by(live.runs):
            # Its stream returned to park, not to end: no `complete`, and the operation
            # stays registered (strawberry's way out of run_operation without either).
            raise OperationStreamClosed

    def _restart(self, operation: Any) -> None:
        """Run a parked operation again, as its own task, as handle_subscribe did."""
        current = self.operations.get(operation.id)
        if current is None or current is not operation:
            return
        task = current.task = asyncio.create_task(self.run_operation(operation))
        task.add_done_callback(self._task_done)

    async def cleanup_operation(self, operation_id: str) -> None:
        if operation_id in self.operations:
            self.end_live(operation_id)
        await super().cleanup_operation(operation_id)

    async def shutdown(self) -> None:
        try:
            await super().shutdown()
        finally:
            self.end_all_live()


class ParkingLegacyWSHandler(LiveOperations, LegacyWSHandler):
    """The legacy `graphql-ws` protocol whose `gameUpdates` operations may park."""

    def operation_begins(
        self,
        operation_id: str,
        query: str,
        operation_name: str | None,
        variables: dict[str, object] | None,
    ) -> Any:
        restart = partial(self._restart, operation_id, query, operation_name, variables)
        live = self.start_live(operation_id, "data", restart)
        return (live, live.runs)

    def operation_parked(self, run: Any) -> bool:
        live, number = run
        return bool(live.parked_by(number))

    def operation_ends(self, operation_id: str, run: Any) -> None:
        live, number = run
        # Parked: it stays registered (its finished task counts towards the limit and is
        # what `stop` finds), and its `complete` comes when it ends.
        if live.parked_by(number):
            if self.tasks.get(operation_id) is asyncio.current_task():
                self.tasks[operation_id] = parked_task()
        elif live.runs == number:
            self.end_live(operation_id, live)
            self.tasks.pop(operation_id, None)

    def _restart(
        self,
        operation_id: str,
        query: str,
        operation_name: str | None,
        variables: dict[str, object] | None,
    ) -> None:
        """Run a parked operation again, as its own task, as handle_start did."""
        results = self.handle_async_results(operation_id, query, operation_name, variables)
        self.tasks[operation_id] = asyncio.create_task(results)

    async def cleanup_operation(self, operation_id: str) -> None:
        parked = self.is_parked(operation_id)
        self.end_live(operation_id)
        await super().cleanup_operation(operation_id)
        if parked:  # no task was left to answer the `stop`
            await self.send_message(CompleteMessage(type="complete", id=operation_id))

    async def cleanup(self) -> None:
        try:
            await super().cleanup()
        finally:
            self.end_all_live()
