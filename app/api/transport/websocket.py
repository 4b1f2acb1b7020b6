"""Both subscription protocols on `/graphql`: graphql-transport-ws and the legacy
`graphql-ws` of subscriptions-transport-ws (still the default of Apollo Kotlin and Apollo
iOS), with the same auth, limits, trusted documents and close codes."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from typing import Any, cast

from graphql import GraphQLError, OperationType, get_operation_ast, parse
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    ConnectionInitMessage,
    SubscribeMessage,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    Message as TransportMessage,
)
from strawberry.subscriptions.protocols.graphql_ws.handlers import BaseGraphQLWSHandler
from strawberry.subscriptions.protocols.graphql_ws.types import (
    CompleteMessage,
    ErrorMessage,
    OperationMessage,
    StartMessage,
)
from strawberry.subscriptions.protocols.graphql_ws.types import (
    ConnectionInitMessage as LegacyInitMessage,
)
from strawberry.types.execution import ExecutionResult, PreExecutionError
from strawberry.types.unset import UnsetType

from app.api.transport.close_codes import CLOSE_BAD_MESSAGE, CLOSE_TOO_MANY, CLOSE_UNAUTHORIZED
from app.api.transport.persisted import Documents
from app.api.transport.refusals import Refusal
from app.api.transport.slow_consumers import GuardedSends
from app.rules.errors import ErrorCode

SUBPROTOCOLS = (GRAPHQL_TRANSPORT_WS_PROTOCOL, GRAPHQL_WS_PROTOCOL)


class Rejection(ConnectionRejectionError):
    """A refused connection_init, with the close code and reason to answer it with."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__({"message": reason})
        self.code = code
        self.reason = reason


def pick_subprotocol(offered: list[str]) -> str | None:
    """The subprotocol to speak: graphql-transport-ws when the client offers it (clients
    that offer both, such as Python's gql, speak either), else the legacy one."""
    return next((p for p in SUBPROTOCOLS if p in offered), None)


async def refuse_handshake(socket: WebSocket, offered: list[str]) -> None:
    """Refuse an upgrade that names no subprotocol we speak: an HTTP 400 naming the ones we
    do (or a bare 403 where the ASGI server cannot send a body)."""
    wanted = ", ".join(offered) if offered else "none"
    body = f"unsupported WebSocket subprotocol ({wanted}); use one of: {', '.join(SUBPROTOCOLS)}"
    if "websocket.http.response" in socket.scope.get("extensions", {}):
        await socket.send_denial_response(Response(body, status_code=400))
    else:
        await socket.close(code=1002, reason=body[:120])


def _documents(handler: Any) -> Documents:
    return cast(Documents, handler.view.documents)


def _errors_of(message: Any) -> list[Any]:
    """The GraphQL errors an outgoing message of either protocol carries: an `error`
    message's payload (a list, or one error in the legacy protocol), or the `errors` of
    a `next`/`data` payload."""
    if not isinstance(message, dict):
        return []
    kind, payload = message.get("type"), message.get("payload")
    if kind == "error":
        return payload if isinstance(payload, list) else [payload]
    if kind in ("next", "data") and isinstance(payload, dict):
        errors = payload.get("errors")
        return errors if isinstance(errors, list) else []
    return []


def limit_reason(message: Any) -> str | None:
    """The close reason if an outgoing message refuses an operation for a limit (too many
    subscriptions, a rate limit): the socket is closed with 4429 instead (docs/api.md)."""
    for error in _errors_of(message):
        extensions = error.get("extensions") if isinstance(error, dict) else None
        if isinstance(extensions, dict) and extensions.get("code") == ErrorCode.RATE_LIMITED:
            reason = str(error.get("message") or "rate limited")
            retry = extensions.get("retryAfter")
            if retry is not None:
                reason += f" (retry after {retry} s)"
            return reason.encode()[:120].decode(errors="ignore")
    return None


class ClosesWhenLimited:
    """Mixin for both protocol handlers: an operation refused for a limit closes the
    socket with 4429 and a reason naming the limit, not an error message (docs/api.md); after
    that nothing more is sent."""

    websocket: Any
    _closed_for_limit: bool = False

    async def send_message(self, message: Any) -> None:
        """Send, or close with 4429 instead when the message refuses for a limit."""
        if self._closed_for_limit:
            return
        reason = limit_reason(message)
        if reason is None:
            await super().send_message(message)  # type: ignore[misc]
            return
        self._closed_for_limit = True
        with contextlib.suppress(Exception):
            await self.websocket.close(code=CLOSE_TOO_MANY, reason=reason)


def _envelope_problem(message: object, with_id: tuple[str, ...]) -> str | None:
    """What is wrong with a message's type, or the id of the kinds `with_id` need."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "Failed to parse message"
    if message["type"] in with_id and not isinstance(message.get("id"), str):
        return "Failed to parse message"
    return None


def _operation_problem(payload: object) -> str | None:
    """What is wrong with the payload that starts an operation (either protocol)."""
    if not isinstance(payload, dict):
        return "Invalid subscribe message payload"
    query = payload.get("query")
    if not isinstance(query, str) and not (query is None and payload.get("extensions")):
        return "Invalid subscribe message payload"
    for key, kinds in (("variables", dict), ("operationName", str), ("extensions", dict)):
        if payload.get(key) is not None and not isinstance(payload[key], kinds):
            return "Invalid subscribe message payload"
    return None


def _transport_problem(message: object) -> str | None:
    """What is wrong with the shape of a graphql-transport-ws message, if anything."""
    problem = _envelope_problem(message, ("subscribe", "complete"))
    if problem is not None or cast(dict[str, Any], message)["type"] != "subscribe":
        return problem
    return _operation_problem(cast(dict[str, Any], message).get("payload"))


def _ack(ack: object) -> Any:
    """The connection_ack message, with the payload `on_ws_connect` gave, if any."""
    if isinstance(ack, UnsetType) or ack is None:
        return {"type": "connection_ack"}
    return {"type": "connection_ack", "payload": ack}


# How long a connection that ended waits for its mutations under way to finish.
MUTATION_GRACE_SECONDS = 10.0


@functools.lru_cache(maxsize=512)
def is_mutation(query: str | None, operation_name: str | None) -> bool:
    """Whether the document runs a mutation (by its text: parsed once per text)."""
    if not query:
        return False
    try:
        document = parse(query)
    except GraphQLError:
        return False
    operation = get_operation_ast(document, operation_name)
    return operation is not None and operation.operation is OperationType.MUTATION


class FinishesMutations:
    """Mixin for both protocol handlers: a mutation under way is never cancelled, not by
    the client stopping it nor by its connection ending (a server's drain closes every
    WebSocket): its move is made and published whether or not its answer can still be
    sent, so a change is never committed and left unannounced."""

    _finishing: set[asyncio.Task[Any]] | None = None

    def keep_running(self, task: asyncio.Task[Any]) -> None:
        """Let `task` (a mutation's) run to its end, held until then."""
        finishing = self._finishing
        if finishing is None:
            finishing = self._finishing = set()
        finishing.add(task)
        task.add_done_callback(finishing.discard)

    async def finish_mutations(self) -> None:
        """Wait (a while at most) for the mutations let run to end."""
        if self._finishing:
            await asyncio.wait(set(self._finishing), timeout=MUTATION_GRACE_SECONDS)


class Acknowledged:
    """Mixin for both protocol handlers: a hook once a connection is acknowledged."""

    def handshake_done(self) -> None:
        """The connection is acknowledged (the fast path lets go of what only the
        handshake needed: app/api/fastpath/parking.py); nothing to do here."""


class CheckedTransportWSHandler(
    FinishesMutations,
    Acknowledged,
    ClosesWhenLimited,
    GuardedSends,
    BaseGraphQLTransportWSHandler[Any, None],
):
    """graphql-transport-ws that checks each message's shape first (strawberry indexes into
    messages unchecked: a malformed one closes with 4400, as bad JSON does), closes a
    refused connection_init with the rejection's code (4401, 4429) instead of 4403, and
    runs only documents the server may run (persisted hash, trusted documents); a client
    that stops reading is closed with 4410 (GuardedSends), one over a limit with 4429
    (ClosesWhenLimited)."""

    async def handle_message(self, message: TransportMessage) -> None:
        problem = _transport_problem(message)
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        await super().handle_message(message)

    async def handle_connection_init(self, message: ConnectionInitMessage) -> None:
        if self.connection_timed_out:
            return
        if self.connection_init_timeout_task:
            # Cancelled, and forgotten: kept, the task would hold its CancelledError and
            # that error's frames for the connection's life.
            self.connection_init_timeout_task.cancel()
            self.connection_init_timeout_task = None
        payload = message.get("payload", {})
        if not isinstance(payload, dict):
            await self.websocket.close(
                code=CLOSE_BAD_MESSAGE, reason="Invalid connection init payload"
            )
            return
        if self.connection_init_received:
            await self.websocket.close(
                code=CLOSE_TOO_MANY, reason="Too many initialisation requests"
            )
            return
        self.connection_init_received = True
        self.context.connection_params = payload
        try:
            ack = await self.view.on_ws_connect(self.context)
        except Rejection as rejection:
            await self.websocket.close(code=rejection.code, reason=rejection.reason)
            return
        except ConnectionRejectionError:
            await self.websocket.close(code=CLOSE_UNAUTHORIZED, reason="connection refused")
            return
        await self.send_message(_ack(ack))
        self.connection_acknowledged = True
        self.handshake_done()
        self.context.connection_params = None  # read by on_ws_connect only

    async def handle_subscribe(self, message: SubscribeMessage) -> None:
        if self.connection_acknowledged and message["id"] not in self.operations:
            payload = message["payload"]
            try:
                resolved = _documents(self).resolve(
                    payload.get("query"),
                    payload.get("extensions"),
                    cast(dict[str, object], payload).get("documentId"),
                )
            except Refusal as refusal:
                await self.send_message(
                    {"id": message["id"], "type": "error", "payload": [refusal.error().formatted]}
                )
                return
            # Interned: each subscriber's operation keeps its text for its life, and
            # most send the very same text.
            payload["query"] = sys.intern(cast(str, resolved.query))
        await super().handle_subscribe(message)

    async def cleanup_operation(self, operation_id: str) -> None:
        operation = self.operations.get(operation_id)
        task = operation.task if operation is not None else None
        if (
            operation is not None
            and task is not None
            and not task.done()
            and is_mutation(operation.query, operation.operation_name)
        ):
            self.operations.pop(operation_id, None)
            self.keep_running(task)
            return
        await super().cleanup_operation(operation_id)

    async def shutdown(self) -> None:
        try:
            await super().shutdown()
            await self.finish_mutations()
        finally:
            self.close_writer()


def _legacy_problem(message: object) -> str | None:
    """What is wrong with the shape of a legacy graphql-ws message, if anything."""
    problem = _envelope_problem(message, ("start", "stop"))
    if problem is not None or cast(dict[str, Any], message)["type"] != "start":
        return problem
    return _operation_problem(cast(dict[str, Any], message).get("payload"))


class LegacyWSHandler(
    FinishesMutations,
    Acknowledged,
    ClosesWhenLimited,
    GuardedSends,
    BaseGraphQLWSHandler[Any, None],
):
    """The legacy `graphql-ws` protocol (connection_init/connection_ack/ka, start/data/
    error/complete/stop, connection_terminate) on strawberry's handler, with the same
    guards as graphql-transport-ws: message shapes checked, a refused connection_init
    answered with `connection_error` and closed with the rejection's code, and only
    documents the server may run."""

    async def handle(self) -> None:
        """Serve the connection; one that sends no connection_init within the view's
        connection_init_wait_timeout is closed (4408), as graphql-transport-ws does."""
        timeout = asyncio.create_task(self._close_if_not_initialised())
        try:
            await super().handle()
        finally:
            timeout.cancel()

    async def _close_if_not_initialised(self) -> None:
        await asyncio.sleep(self.view.connection_init_wait_timeout.total_seconds())
        if not self.connection_acknowledged:
            with contextlib.suppress(Exception):
                await self.websocket.close(code=4408, reason="Connection initialisation timeout")

    async def handle_message(self, message: OperationMessage) -> None:
        problem = _legacy_problem(message)
        if problem is not None:
            await self.websocket.close(code=CLOSE_BAD_MESSAGE, reason=problem)
            return
        kind = message["type"]
        if kind not in ("connection_init", "connection_terminate", "start", "stop"):
            unknown: Any = {
                "type": "error",
                "id": message.get("id"),
                "payload": {"message": f"unknown message type {kind!r}"},
            }
            await self.send_message(unknown)
            return
        await super().handle_message(message)

    async def handle_connection_init(self, message: LegacyInitMessage) -> None:
        payload = message.get("payload")
        if payload is not None and not isinstance(payload, dict):
            await self.send_message(
                {
                    "type": "connection_error",
                    "payload": {"message": "Invalid connection init payload"},
                }
            )
            await self.websocket.close(
                code=CLOSE_BAD_MESSAGE, reason="Invalid connection init payload"
            )
            return
        if self.connection_acknowledged:
            return  # a second init changes nothing
        self.context.connection_params = payload
        try:
            ack = await self.view.on_ws_connect(self.context)
        except ConnectionRejectionError as rejection:
            code = rejection.code if isinstance(rejection, Rejection) else CLOSE_UNAUTHORIZED
            reason = rejection.reason if isinstance(rejection, Rejection) else "connection refused"
            await self.send_message({"type": "connection_error", "payload": {"message": reason}})
            await self.websocket.close(code=code, reason=reason)
            return
        await self.send_message(_ack(ack))
        self.connection_acknowledged = True
        self.handshake_done()
        self.context.connection_params = None  # read by on_ws_connect only
        if self.keep_alive:
            self.keep_alive_task = asyncio.create_task(self.handle_keep_alive())

    async def handle_start(self, message: StartMessage) -> None:
        if self.connection_acknowledged:
            payload = message["payload"]
            try:
                resolved = _documents(self).resolve(
                    payload.get("query"),
                    cast(dict[str, Any], payload).get("extensions"),
                    cast(dict[str, Any], payload).get("documentId"),
                )
            except Refusal as refusal:
                await self.send_message(
                    {"type": "error", "id": message["id"], "payload": refusal.error().formatted}
                )
                return
            payload["query"] = sys.intern(cast(str, resolved.query))
        await super().handle_start(message)

    async def handle_async_results(
        self,
        operation_id: str,
        query: str,
        operation_name: str | None,
        variables: dict[str, object] | None,
    ) -> None:
        """Run one `start`d operation: a subscription streams `data` messages, a query or
        a mutation sends one, then `complete`. subscriptions-transport-ws sends queries
        and mutations as `start` too; strawberry's handler runs every operation through
        `schema.subscribe`, which refuses any but a subscription (and our error masking
        then answered "Internal server error"), so this runs them through
        `schema.stream`, which dispatches on the operation's type."""
        run = self.operation_begins(operation_id, query, operation_name, variables)
        mutation = is_mutation(query, operation_name)
        if mutation:
            self._mutation_ids.add(operation_id)
        try:
            source = await self.schema.stream(
                query,
                variable_values=variables,
                context_value=self.context,
                root_value=self.root_value,
                operation_name=operation_name,
            )
            self.subscriptions[operation_id] = source
            first = True
            async for result in source:
                if not isinstance(result, ExecutionResult) or (
                    first and isinstance(result, PreExecutionError)
                ):
                    await self.send_message(_legacy_error(operation_id, result))
                    return
                await self.send_data_message(result, operation_id)
                first = False
            if not self.operation_parked(run):
                await self.send_message(CompleteMessage(type="complete", id=operation_id))
        except asyncio.CancelledError:
            await self.send_message(CompleteMessage(type="complete", id=operation_id))
        finally:
            if mutation:
                self._mutation_ids.discard(operation_id)
            self.subscriptions.pop(operation_id, None)
            self.operation_ends(operation_id, run)

    def operation_begins(
        self,
        operation_id: str,
        query: str,
        operation_name: str | None,
        variables: dict[str, object] | None,
    ) -> Any:
        """An operation's run starts (the fast path registers it: app/api/fastpath/parking.py);
        what it returns is the run's token."""
        return None

    def operation_parked(self, run: Any) -> bool:
        """Whether the run ended by parking, not by completing (never here)."""
        return False

    def operation_ends(self, operation_id: str, run: Any) -> None:
        """The run is over: the operation no longer counts."""
        self.tasks.pop(operation_id, None)

    @property
    def _mutation_ids(self) -> set[str]:
        """The ids of the mutations under way (made on first use)."""
        ids: set[str] | None = self.__dict__.get("_mutations_under_way")
        if ids is None:
            ids = self.__dict__["_mutations_under_way"] = set()
        return ids

    async def cleanup_operation(self, operation_id: str) -> None:
        task = self.tasks.get(operation_id)
        if operation_id in self._mutation_ids and task is not None and not task.done():
            self.tasks.pop(operation_id, None)
            self.keep_running(task)
            return
        await super().cleanup_operation(operation_id)

    async def cleanup(self) -> None:
        try:
            with contextlib.suppress(Exception):
                await super().cleanup()
            await self.finish_mutations()
        finally:
            self.close_writer()


def _legacy_error(operation_id: str, result: object) -> ErrorMessage:
    """The `error` message for an operation refused before it ran (its first error), or
    for incremental delivery, which the legacy protocol has no message for."""
    if isinstance(result, PreExecutionError) and result.errors:
        return ErrorMessage(type="error", id=operation_id, payload=result.errors[0].formatted)
    message = "incremental delivery (@defer, @stream) is not supported over graphql-ws"
    return ErrorMessage(type="error", id=operation_id, payload={"message": message})
