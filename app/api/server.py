"""The ASGI application (Starlette + strawberry) and `spades serve`."""

from __future__ import annotations

import json
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
from strawberry.subscriptions.protocols.graphql_transport_ws.handlers import (
    BaseGraphQLTransportWSHandler,
)
from strawberry.subscriptions.protocols.graphql_transport_ws.types import Message
from strawberry.types.unset import UnsetType

from app.services.auth import Player
from app.services.hub import Services
from app.settings import Settings, load_settings
from app.store.migrate import upgrade

from .context import Context, bearer_token
from .errors import OUTAGES
from .schema import schema

log = logging.getLogger("app.server")


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

    async def handle_message(self, message: Message) -> None:
        problem = _message_problem(message)
        if problem is not None:
            await self.handle_invalid_message(problem)
            return
        await super().handle_message(message)


class SpadesGraphQL(GraphQL[Context, None]):
    """Strawberry's ASGI view with our auth for HTTP and WebSocket."""

    graphql_transport_ws_handler_class = CheckedTransportWSHandler

    def __init__(self, services: Services, **kwargs: Any) -> None:
        super().__init__(schema, **kwargs)
        self.services = services

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
