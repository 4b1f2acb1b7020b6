"""The ASGI application (Starlette + strawberry) and `spades serve`."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.exceptions import ConnectionRejectionError
from strawberry.subscriptions import GRAPHQL_TRANSPORT_WS_PROTOCOL
from strawberry.types.unset import UnsetType

from app.services.auth import Player
from app.services.hub import Services
from app.settings import Settings, load_settings
from app.store.migrate import upgrade

from .context import Context, bearer_token
from .errors import OUTAGES
from .schema import schema

log = logging.getLogger("app.server")


class SpadesGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view with our auth for HTTP and WebSocket."""

    def __init__(self, services: Services, **kwargs: Any) -> None:
        super().__init__(schema, **kwargs)
        self.services = services

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket | None = None
    ) -> Context:
        token = bearer_token(request.headers.get("authorization"))
        player, failure = await self._authenticate(token)
        return Context(
            services=self.services,
            request=request,
            response=response,
            player=player,
            auth_failure=failure,
            auth_token=token if failure is not None else None,
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
        if raw is None:
            return await super().on_ws_connect(context)
        token = bearer_token(raw)
        player, failure = await self._authenticate(token)
        if failure is not None:
            # Accept the connection: its operations answer UNAVAILABLE, not "forbidden".
            context.auth_failure = failure
            context.auth_token = token
            return await super().on_ws_connect(context)
        if player is None:
            raise ConnectionRejectionError({"message": "invalid or expired token"})
        context.player = player
        context.auth_failure = context.auth_token = None
        return await super().on_ws_connect(context)


def create_app(settings: Settings | None = None, services: Services | None = None) -> Starlette:
    """The whole server as an ASGI app."""
    settings = settings or load_settings()
    services = services or Services(settings)
    graphql = SpadesGraphQL(
        services,
        subscription_protocols=[GRAPHQL_TRANSPORT_WS_PROTOCOL],
        allowed_origins=list(settings.allowed_origins),
    )

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

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await services.start()
        try:
            yield
        finally:
            await services.stop()

    app = Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/metrics", metrics),
            Route("/graphql", graphql, methods=["GET", "POST"]),
            WebSocketRoute("/graphql", graphql),
        ],
        middleware=[
            Middleware(
                CORSMiddleware,
                allow_origins=list(settings.allowed_origins),
                allow_methods=["GET", "POST", "OPTIONS"],
                allow_headers=["authorization", "content-type"],
            )
        ],
        lifespan=lifespan,
    )
    app.state.services = services
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
    )
