"""The ASGI application (Starlette + strawberry) and `spades serve`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from cross_web import HTTPException
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError, MissingQueryError
from strawberry.http import GraphQLRequestData
from strawberry.http.parse_content_type import parse_content_type
from strawberry.http.types import HTTPMethod
from strawberry.schema.exceptions import CannotGetOperationTypeError, InvalidOperationTypeError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import (
    Message as TransportMessage,
)
from strawberry.types import ExecutionResult
from strawberry.types.graphql import OperationType
from strawberry.types.unset import UNSET, UnsetType

from app.services.auth import Player
from app.services.hub import Services
from app.settings import Settings, load_settings
from app.store.migrate import upgrade

from .context import Context, bearer_token
from .errors import OUTAGES
from .guards import Guards, register_socket
from .runtime import patch_graphql_core, tame_garbage_collector
from .schema import build_schema
from .sharing import encode_message
from .slow import SendGuard

log = logging.getLogger("app.server")

patch_graphql_core()

EXPIRY_SWEEP_SECONDS = 30


def _message_problem(message: object) -> str | None:
    """What is wrong with the shape of a graphql-transport-ws message, if anything."""
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        return "Failed to parse message"
    kind = message["type"]
    if kind in ("subscribe", "complete") and not isinstance(message.get("id"), str):
        return "Failed to parse message"
    if kind != "subscribe":
        return None
    payload = message.get("payload")
    if not isinstance(payload, dict) or not isinstance(payload.get("query"), str):
        return "Invalid subscribe message payload"
    for key, kinds in (("variables", dict), ("operationName", str), ("extensions", dict)):
        if payload.get(key) is not None and not isinstance(payload[key], kinds):
            return "Invalid subscribe message payload"
    return None


class CheckedTransportWSHandler(BaseGraphQLTransportWSHandler[Context, None]):
    """graphql-transport-ws that checks each message's shape first: strawberry indexes into
    messages unchecked, so a malformed one (a list, an object id, a null payload...) killed
    the socket with an internal error. Now it closes with 4400, as for bad JSON."""

    _send_guard: SendGuard | None = None

    async def send_message(self, message: TransportMessage) -> None:
        """Send, closing with 4410 a connection whose client stopped reading."""
        guard = self._send_guard
        if guard is None:
            timeout = self.context.services.settings.ws_send_timeout_ms / 1000
            guard = self._send_guard = SendGuard(timeout)
        await guard.send(super().send_message(message), self.websocket.close)

    async def handle_message(self, message: TransportMessage) -> None:
        problem = _message_problem(message)
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        await super().handle_message(message)


class SpadesGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view with our auth for HTTP and WebSocket, and per-player caps."""

    graphql_transport_ws_handler_class = CheckedTransportWSHandler

    def __init__(self, services: Services, guards: Guards, **kwargs: Any) -> None:
        super().__init__(build_schema(services.settings), **kwargs)
        self.services = services
        self.guards = guards

    def encode_json(self, data: object) -> str | bytes:
        """JSON of an answer or a transport message; a subscription result shared by
        several subscribers is encoded once (app/api/sharing.py)."""
        shared = encode_message(data)
        return shared if shared is not None else super().encode_json(data)

    def decode_json(self, data: str | bytes) -> object:
        """JSON of a request body; a body that is not UTF-8 is unparsable JSON (a 400), not an
        internal error."""
        try:
            return super().decode_json(data)
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError("the body is not UTF-8", "", 0) from exc

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket | None = None
    ) -> Context:
        token = bearer_token(request.headers.get("authorization"))
        player, failure = await self._authenticate(token)
        return Context(
            services=self.services,
            request=request,
            response=response,
            guards=self.guards,
            player=player,
            token=token if player is not None or failure is not None else None,
            auth_failure=failure,
        )

    async def _authenticate(self, token: str | None) -> tuple[Player | None, BaseException | None]:
        """The token's player; on a database outage, no player and the outage (resolvers
        that need the caller then answer UNAVAILABLE instead of a bare HTTP 500)."""
        if not token:
            return None, None
        try:
            return await self.services.auth.authenticate(token), None
        except OUTAGES as exc:
            return None, exc

    async def on_ws_connect(self, context: Context) -> UnsetType | dict[str, object] | None:
        params = context.connection_params or {}
        raw = params.get("Authorization", params.get("authorization"))
        if raw is not None:
            token = bearer_token(raw)
            player, failure = await self._authenticate(token)
            if failure is not None:
                # Accept the connection: its operations answer UNAVAILABLE, not "forbidden",
                # and check the token again (and register the socket) once they can.
                context.player, context.token, context.auth_failure = None, token, failure
                return await super().on_ws_connect(context)
            if player is None or token is None:
                raise ConnectionRejectionError({"message": "invalid or expired token"})
            context.player, context.token, context.auth_failure = player, token, None
        if (
            context.player is not None
            and context.token is not None
            and not await register_socket(
                self.guards,
                self.services.auth,
                context.request,  # type: ignore[arg-type]
                context.player,
                context.token,
            )
        ):
            raise ConnectionRejectionError({"message": "too many connections for this player"})
        return await super().on_ws_connect(context)

    async def parse_http_body(self, request: Any) -> GraphQLRequestData | list[GraphQLRequestData]:
        """Strawberry's parsing, after refusing JSON bodies of the wrong shape with 400 (a
        body such as `5`, `null` or `[1]` would otherwise fail inside strawberry with a 500)."""
        content_type, _ = parse_content_type(request.content_type or "")
        if request.method == "POST" and "application/json" in content_type:
            check_body_shape(self.parse_json(await request.get_body()))
        return await super().parse_http_body(request)

    async def execute_single(
        self,
        request: Any,
        request_adapter: Any,
        sub_response: Any,
        context: Context,
        root_value: Any,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        """One operation over plain HTTP: queries and mutations only. Strawberry would run a
        subscription here as if it were a query and fail with an internal error; streamed
        transports do not come this way."""
        method: HTTPMethod = request_adapter.method
        allowed = OperationType.from_http(method) - {OperationType.SUBSCRIPTION}
        if method == "GET" and not self.allow_queries_via_get:
            allowed -= {OperationType.QUERY}
        try:
            return await self.schema.execute(
                request_data.query,
                root_value=root_value,
                variable_values=request_data.variables,
                context_value=context,
                operation_name=request_data.operation_name,
                allowed_operation_types=allowed,
                operation_extensions=request_data.extensions,
            )
        except InvalidOperationTypeError as exc:
            reason = exc.as_http_error_reason(method)
            if exc.operation_type is OperationType.SUBSCRIPTION:
                reason = "subscriptions are served over WebSocket only"
            raise HTTPException(400, reason) from exc
        except CannotGetOperationTypeError as exc:
            raise HTTPException(400, exc.as_http_error_reason()) from exc
        except MissingQueryError as exc:
            raise HTTPException(400, "No GraphQL query found in the request") from exc

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """Forget a WebSocket's registration when its connection ends."""
        try:
            return await super().run(request, context, root_value)
        finally:
            if isinstance(request, WebSocket):
                self.guards.close(request)


# What each member of a JSON request body may be, besides null.
BODY_MEMBERS: dict[str, type] = {
    "query": str,
    "operationName": str,
    "variables": dict,
    "extensions": dict,
}


def check_body_shape(data: object) -> None:
    """A GraphQL-over-HTTP body is an object, or (batching) an array of objects, whose
    members have the right types; anything else is the client's error (400)."""
    for item in data if isinstance(data, list) else [data]:
        if not isinstance(item, dict):
            raise HTTPException(400, "the body must be a JSON object or an array of objects")
        for name, kind in BODY_MEMBERS.items():
            value = item.get(name)
            if value is not None and not isinstance(value, kind):
                expected = "a string" if kind is str else "an object"
                raise HTTPException(400, f"`{name}` must be {expected} or null")


class RedactSecrets(logging.Filter):
    """Keeps passwords and tokens out of uvicorn's log: request lines lose their query
    strings (a signIn sent by GET is refused, but its URL was logged), and the WebSocket
    library's dumps of frames and headers (debug level) are dropped, as they carry the
    connection_init token and, for a signIn sent over a WebSocket, the password."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno <= logging.DEBUG and str(record.msg).startswith(("< ", "> ")):
            return False
        if isinstance(record.args, tuple):
            record.args = tuple(_without_query(arg) for arg in record.args)
        return True


def _without_query(value: object) -> object:
    if isinstance(value, str) and value.startswith("/") and "?" in value:
        return value.split("?", 1)[0] + "?[redacted]"
    return value


REDACT_SECRETS = RedactSecrets()


class BodyLimit:
    """Refuses HTTP request bodies over `max_bytes` with 413 (declared or streamed)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await _too_large(self.max_bytes)(scope, receive, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise _BodyTooLarge()
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except _BodyTooLarge:
            if not started:
                await _too_large(self.max_bytes)(scope, receive, send)


class _BodyTooLarge(Exception):
    pass


def _too_large(max_bytes: int) -> JSONResponse:
    return JSONResponse(
        {"errors": [{"message": f"request body over {max_bytes} bytes"}]}, status_code=413
    )


def create_app(settings: Settings | None = None, services: Services | None = None) -> Starlette:
    """The whole server as an ASGI app."""
    settings = settings or load_settings()
    services = services or Services(settings)
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(REDACT_SECRETS)  # once: addFilter dedupes
    guards = Guards(settings.ws_connections_per_player, settings.subscriptions_per_player)
    graphql = SpadesGraphQL(
        services,
        guards,
        subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL],
        allowed_origins=list(settings.allowed_origins),
    )
    services.revocation_handlers.append(guards.close_token)

    async def recheck_sockets() -> None:
        await guards.close_invalid(services.auth.valid_digests)

    services.recheck_handlers.append(recheck_sockets)

    async def metrics(_request: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    async def healthz(_request: Request) -> JSONResponse:
        database = "ok"
        try:
            async with services.db.read() as session:
                await session.connection()
        except Exception:
            database = "unavailable"
        broker = "ok" if services.broker.healthy else "unavailable"
        ok = database == "ok" and broker == "ok"
        return JSONResponse(
            {"status": "ok" if ok else "degraded", "database": database, "broker": broker},
            status_code=200 if ok else 503,
        )

    async def close_expired_forever() -> None:
        while True:
            await asyncio.sleep(EXPIRY_SWEEP_SECONDS)
            await guards.close_expired()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await services.start()
        tame_garbage_collector()
        sweeper = asyncio.create_task(close_expired_forever())
        try:
            yield
        finally:
            sweeper.cancel()
            await asyncio.gather(sweeper, return_exceptions=True)
            await services.stop()

    app = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/metrics", metrics),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
        ],
        middleware=[
            Middleware(BodyLimit, max_bytes=settings.max_body_bytes),
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.allowed_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["authorization", "content-type"],
            ),
        ],
        lifespan=lifespan,
    )
    app.state.services = services
    app.state.guards = guards
    return app


def serve(
    host: str | None = None,
    port: int | None = None,
    database_url: str | None = None,
    workers: int = 1,
) -> None:
    """Apply pending migrations, then run the server with uvicorn (flags override the
    environment). With several workers, the processes share one port."""
    settings = load_settings().with_overrides(host=host, port=port, database_url=database_url)
    logging.basicConfig(level=settings.log_level.upper())
    upgrade(settings.database_url)
    # Workers read their settings from the environment: pass the flags on through it.
    os.environ["SPADES_DATABASE_URL"] = settings.database_url
    uvicorn.run(
        "app.api.server:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=max(1, workers),
        log_level=settings.log_level,
        ws_per_message_deflate=False,
        ws_max_size=settings.max_ws_message_bytes,
    )
