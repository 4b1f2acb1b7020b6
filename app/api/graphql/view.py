"""The GraphQL view: strawberry's ASGI view with the server's auth for HTTP and WebSocket,
per-player caps, and the transport of app/api/transport (refusals, media types,
persisted documents, both WebSocket subprotocols)."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any, cast

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.types.unset import UNSET, UnsetType

from app.api import fastpath
from app.api.graphql.context import Context, bearer_token
from app.api.graphql.errors import OUTAGES
from app.api.graphql.log_fields import attach_request
from app.api.graphql.schema import SpadesSchema, build_schema
from app.api.socket_guards import Guards, register_socket
from app.api.transport.close_codes import CLOSE_FORBIDDEN, CLOSE_TOO_MANY, CLOSE_UNAUTHORIZED
from app.api.transport.graphiql import graphiql_page
from app.api.transport.http import HTTPTransport
from app.api.transport.persisted import Documents
from app.api.transport.websocket import Rejection, pick_subprotocol, refuse_handshake
from app.compact_json import dumps
from app.services.accounts.auth import Player
from app.services.container import Services


class SpadesGraphQL(HTTPTransport, GraphQL[Context, None]):
    """Strawberry's ASGI view with our auth for HTTP and WebSocket, per-player caps, and
    the transport of app/api/transport (refusals, media types, persisted documents, both
    WebSocket subprotocols)."""

    # The handlers of both subprotocols (the fast path's can park an idle subscription).
    graphql_transport_ws_handler_class, graphql_ws_handler_class = fastpath.websocket_handlers()

    def __init__(
        self, services: Services, guards: Guards, documents: Documents, **kwargs: Any
    ) -> None:
        super().__init__(build_schema(services.settings), **kwargs)
        self.services = services
        self.guards = guards
        self.documents = documents
        self.max_batch = services.settings.max_batch
        schema = cast(SpadesSchema, self.schema)
        self.shortcut = fastpath.http_shortcut(self, schema.operation_config)
        self._encode_shared = fastpath.shared_message_encoder()

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
        """JSON of an answer or a transport message (a subscription result shared by
        several subscribers is encoded once, by the fast path)."""
        shared = self._encode_shared(data) if self._encode_shared is not None else None
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
        context = Context(
            services=self.services,
            request=request,
            response=response,
            guards=self.guards,
            player=player,
            token=token if player is not None or failure is not None else None,
            auth_failure=failure,
        )
        attach_request(context, request)  # what its log lines say of it
        return context

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
