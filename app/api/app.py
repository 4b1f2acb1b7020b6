"""The ASGI application: Starlette with the GraphQL view, health (liveness and
dependencies), readiness (for a load balancer), metrics, GraphiQL and the web client."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from app.api import fastpath
from app.api.gc_tuning import tame_garbage_collector
from app.api.graphql.view import SpadesGraphQL
from app.api.lifecycle import STOP_RESERVE_SECONDS, Lifecycle, Phase
from app.api.metrics import FANOUT
from app.api.socket_guards import Guards
from app.api.transport.edge import PostEdge
from app.api.transport.graphiql import ROUTES as GRAPHIQL_ROUTES
from app.api.transport.headers import SecurityHeaders
from app.api.transport.http import BodyLimit
from app.api.transport.persisted import Documents, PersistedQueryCache, TrustedDocuments
from app.api.transport.websocket import SUBPROTOCOLS
from app.api.webapp import web_routes
from app.services.container import Services
from app.settings import Settings, load_settings

log = logging.getLogger("app.server")

EXPIRY_SWEEP_SECONDS = 30
LEGACY_KEEP_ALIVE_SECONDS = 15


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
    """Starlette; with the fast path on, the `/graphql` WebSocket is routed past the HTTP
    middlewares and the router: they only pass a WebSocket through, but starlette's
    exception middleware wraps its `send` for the connection's life, and the live updates
    are written straight to uvicorn's protocol (app/api/transport/writer.py).

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


def create_app(
    settings: Settings | None = None,
    services: Services | None = None,
    lifecycle: Lifecycle | None = None,
) -> Starlette:
    """The whole server as an ASGI app; `/readyz` follows `lifecycle` (the process's, when
    run by `spades serve`)."""
    settings = settings or load_settings()
    lifecycle = lifecycle or Lifecycle()
    fastpath.configure(settings)
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
    services.revocations.handlers.append(guards.close_player)
    # The live phase's deliveries (app/services/live/table_feeds.py) bypass core.py's observation.
    services.streams.feeds.on_fanout = FANOUT.observe

    async def recheck_sockets() -> None:
        await guards.close_invalid(services.auth.valid_digests)

    services.recheck_handlers.append(recheck_sockets)

    async def metrics(_request: Request) -> Response:
        return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)

    async def healthz(_request: Request) -> JSONResponse:
        parts = await dependencies(services)
        ok = all(state == "ok" for state in parts.values())
        return JSONResponse(
            {"status": "ok" if ok else "degraded", **parts}, status_code=200 if ok else 503
        )

    async def readyz(_request: Request) -> JSONResponse:
        if lifecycle.phase is not Phase.READY:
            return JSONResponse({"status": lifecycle.phase.value}, status_code=503)
        parts = await dependencies(services)
        if all(state == "ok" for state in parts.values()):
            return JSONResponse({"status": "ready"})
        return JSONResponse({"status": "unavailable", **parts}, status_code=503)

    async def close_expired_forever() -> None:
        while True:
            await asyncio.sleep(EXPIRY_SWEEP_SECONDS)
            await guards.close_expired()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await services.start()
        tame_garbage_collector()
        sweeper = asyncio.create_task(close_expired_forever())
        lifecycle.ready()
        try:
            yield
        finally:
            lifecycle.stopping()
            sweeper.cancel()
            await asyncio.gather(sweeper, return_exceptions=True)
            # Requests and sockets are done: let the work under way (bot moves, turn
            # clocks, presence) finish within the shutdown's budget, then stop. A stop
            # with no drain window (SPADES_DRAIN_SECONDS=0) hands nobody over.
            await services.settle(
                lifecycle.remaining(STOP_RESERVE_SECONDS),
                hand_over=lifecycle.timings.drain_seconds > 0,
            )
            await services.stop()

    http_middleware = [
        Middleware(SecurityHeaders),
        Middleware(BodyLimit, max_bytes=settings.max_body_bytes),
        Middleware(cors_layer, settings=settings),
    ]
    app = SpadesApp(
        routes=[
            Route("/healthz", healthz),
            Route("/readyz", readyz),
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
    if fastpath.enabled():
        # The fast path's two shortcuts (see SpadesApp): the WebSocket past the
        # middlewares, and a POST's three middlewares as one layer (transport/edge.py).
        app.graphql_socket = graphql.serve_socket
        post = PostEdge(graphql, settings.max_body_bytes, cors_layer(graphql, settings))
        app.graphql_post = post
    return app


async def dependencies(services: Services) -> dict[str, str]:
    """Whether the database and the broker answer: "ok" or "unavailable" for each."""
    database = "ok"
    try:
        async with services.db.read() as session:
            await session.connection()
    except Exception:
        database = "unavailable"
    broker = "ok" if services.broker.healthy else "unavailable"
    return {"database": database, "broker": broker}


def cors_layer(app: ASGIApp, settings: Settings) -> CORSMiddleware:
    """starlette's CORS middleware around `app`, as `settings` allow."""
    return CORSMiddleware(
        app,
        allow_origins=list(settings.allowed_origins),
        allow_methods=["GET", "POST", "OPTIONS"],
        allow_headers=list(settings.cors_allow_headers),
        max_age=600,
    )
