"""The ASGI application (Starlette + strawberry) and `spades serve`."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any, cast

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.types.unset import UNSET, UnsetType

from app.api.fastpath.http import HotPath
from app.api.fastpath.patches import patch_graphql_core, tame_garbage_collector
from app.api.fastpath.sharing import encode_message
from app.api.graphql.context import Context, bearer_token
from app.api.graphql.errors import OUTAGES
from app.api.graphql.schema import SpadesSchema, build_schema
from app.api.metrics import FANOUT
from app.api.socket_guards import Guards, register_socket
from app.api.transport.close_codes import CLOSE_FORBIDDEN, CLOSE_TOO_MANY, CLOSE_UNAUTHORIZED
from app.api.transport.edge import PostEdge
from app.api.transport.graphiql import ROUTES as GRAPHIQL_ROUTES
from app.api.transport.graphiql import graphiql_page
from app.api.transport.headers import SecurityHeaders
from app.api.transport.http import BodyLimit, HTTPTransport
from app.api.transport.persisted import Documents, PersistedQueryCache, TrustedDocuments
from app.api.transport.uvicorn_http import CorkedHttpProtocol
from app.api.transport.uvicorn_websocket import LeanWebSocketProtocol
from app.api.transport.websocket import (
    SUBPROTOCOLS,
    CheckedTransportWSHandler,
    LegacyWSHandler,
    Rejection,
    pick_subprotocol,
    refuse_handshake,
)
from app.api.webapp import web_routes
from app.compact_json import dumps
from app.services.accounts.auth import Player
from app.services.container import Services
from app.settings import Settings, load_settings
from app.store.migrate import upgrade

log = logging.getLogger("app.server")

patch_graphql_core()

EXPIRY_SWEEP_SECONDS = 30
LEGACY_KEEP_ALIVE_SECONDS = 15


class SpadesGraphQL(HTTPTransport, GraphQL[Context, None]):
    """Strawberry's ASGI view with our auth for HTTP and WebSocket, per-player caps, and
    the transport of app/api/transport (refusals, media types, persisted documents, both
    WebSocket subprotocols)."""

    graphql_transport_ws_handler_class = CheckedTransportWSHandler
    graphql_ws_handler_class = LegacyWSHandler

    def __init__(
        self, services: Services, guards: Guards, documents: Documents, **kwargs: Any
    ) -> None:
        super().__init__(build_schema(services.settings), **kwargs)
        self.services = services
        self.guards = guards
        self.documents = documents
        self.max_batch = services.settings.max_batch
        self.hot_path = HotPath(self, cast(SpadesSchema, self.schema).operation_config)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            await self.handle_http(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    async def render_graphql_ide(self, request: Request) -> Response:
        return graphiql_page()

    async def pick_websocket_subprotocol(self, request: WebSocket) -> str | None:
        return pick_subprotocol(list(request.scope.get("subprotocols") or []))

    async def reject_websocket(self, request: WebSocket) -> WebSocket:
        """A page from an origin that is not allowed: accepted, then closed with 4403 and a
        reason (a refused handshake would tell the page nothing)."""
        await request.accept(subprotocol=await self.pick_websocket_subprotocol(request))
        await request.close(code=CLOSE_FORBIDDEN, reason="origin not allowed")
        return request

    def encode_json(self, data: object) -> str | bytes:
        """JSON of an answer or a transport message; a subscription result shared by
        several subscribers is encoded once (app/api/fastpath/sharing.py)."""
        shared = encode_message(data)
        return shared if shared is not None else dumps(data)

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
                raise Rejection(CLOSE_UNAUTHORIZED, "invalid or expired token")
            context.player, context.token, context.auth_failure = player, token, None
        elif context.player is None and context.auth_failure is None and _has_bearer(context):
            # A token on the upgrade request that did not check out.
            raise Rejection(CLOSE_UNAUTHORIZED, "invalid or expired token")
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
            raise Rejection(
                CLOSE_TOO_MANY,
                "too many connections for this player"
                f" (at most {self.guards.connections_per_player})",
            )
        return await super().on_ws_connect(context)

    def serve_socket(self, scope: Scope, receive: Receive, send: Send) -> Awaitable[Any]:
        """A WebSocket on /graphql, as strawberry's `__call__` serves it but with two
        coroutines less on the stack for the connection's life (SpadesApp awaits the one
        this returns: an idle socket's memory is largely its coroutines)."""
        return self.run(WebSocket(scope, receive=receive, send=send))

    async def run(self, request: Any, context: Any = UNSET, root_value: Any = UNSET) -> Any:
        """Refuse a WebSocket upgrade naming no subprotocol we speak; forget a WebSocket's
        registration when its connection ends."""
        if (
            isinstance(request, WebSocket)
            and await self.pick_websocket_subprotocol(request) is None
        ):
            await refuse_handshake(request, list(request.scope.get("subprotocols") or []))
            return request
        try:
            return await super().run(request, context, root_value)
        finally:
            if isinstance(request, WebSocket):
                self.guards.close(request)


def _has_bearer(context: Context) -> bool:
    """Whether the WebSocket's upgrade request carried a bearer token."""
    return bearer_token(context.request.headers.get("authorization")) is not None


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


class SpadesApp(Starlette):
    """Starlette, with the `/graphql` WebSocket routed past the HTTP middlewares and the
    router: they only pass a WebSocket through, but starlette's exception middleware
    wraps its `send` for the connection's life, and the live updates are written
    straight to uvicorn's protocol (app/api/transport/writer.py).

    A POST to `/graphql` (every move) goes straight to the middlewares it needs (security
    headers, body limit, CORS) around the GraphQL view, past starlette's error and
    exception middlewares and its router, which only wrapped its `send` twice more and
    matched it against every route: the view answers every error itself, and an
    exception out of it gets uvicorn's own 500, as starlette's would be."""

    graphql_socket: ASGIApp | None = None
    graphql_post: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Lifespan scopes have no path.
        if scope.get("path") == "/graphql":
            kind = scope["type"]
            if kind == "websocket" and self.graphql_socket is not None:
                scope["app"] = self
                await self.graphql_socket(scope, receive, send)
                return
            if kind == "http" and scope["method"] == "POST" and self.graphql_post is not None:
                scope["app"] = self
                await self.graphql_post(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


def create_app(settings: Settings | None = None, services: Services | None = None) -> Starlette:
    """The whole server as an ASGI app."""
    settings = settings or load_settings()
    services = services or Services(settings)
    for name in ("uvicorn.access", "uvicorn.error"):
        logging.getLogger(name).addFilter(REDACT_SECRETS)  # once: addFilter dedupes
    guards = Guards(settings.ws_connections_per_player, settings.subscriptions_per_player)
    trusted = (
        TrustedDocuments.load(settings.trusted_documents) if settings.trusted_documents else None
    )
    documents = Documents(
        PersistedQueryCache(settings.persisted_queries, settings.max_body_bytes), trusted
    )
    graphql = SpadesGraphQL(
        services,
        guards,
        documents,
        subscription_protocols=list(SUBPROTOCOLS),
        allowed_origins=list(settings.allowed_origins),
        # The legacy protocol's keep-alive ("ka"), which its clients expect.
        keep_alive=True,
        keep_alive_interval=LEGACY_KEEP_ALIVE_SECONDS,
        connection_init_wait_timeout=timedelta(seconds=settings.ws_init_timeout_seconds),
    )
    services.revocation_handlers.append(guards.close_token)
    # The live phase's deliveries (app/services/live/table_feeds.py) bypass core.py's observation.
    services.streams.feeds.on_fanout = FANOUT.observe

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

    http_middleware = [
        Middleware(SecurityHeaders),
        Middleware(BodyLimit, max_bytes=settings.max_body_bytes),
        Middleware(cors_layer, settings=settings),
    ]
    app = SpadesApp(
        routes=[
            Route("/healthz", healthz),
            Route("/metrics", metrics),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
            *GRAPHIQL_ROUTES,
            # Last: the web client's catch-all (its files, and index.html for its routes).
            *web_routes(Path(settings.web_dist) if settings.web_dist else None),
        ],
        middleware=http_middleware,
        lifespan=lifespan,
    )
    app.state.services = services
    app.state.guards = guards
    app.graphql_socket = graphql.serve_socket
    # The same three as one layer (app/api/transport/edge.py).
    app.graphql_post = PostEdge(graphql, settings.max_body_bytes, cors_layer(graphql, settings))
    return app


def cors_layer(app: ASGIApp, settings: Settings) -> CORSMiddleware:
    """starlette's CORS middleware around `app`, as `settings` allow."""
    return CORSMiddleware(
        app,
        allow_origins=list(settings.allowed_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=list(settings.cors_allow_headers),
        max_age=600,
    )


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
        "app.api.app:create_app",
        factory=True,
        host=settings.host,
        port=settings.port,
        workers=max(1, workers),
        log_level=settings.log_level,
        http=CorkedHttpProtocol,
        ws=LeanWebSocketProtocol,
        ws_per_message_deflate=False,
        ws_max_size=settings.max_ws_message_bytes,
    )
