"""Per-request (HTTP) and per-connection (WebSocket) context: who is calling.

For a WebSocket the context lives as long as the connection, so it holds the
signed-in player and the services only: no database session, no caches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.types import Info

if TYPE_CHECKING:
    from .guards import Guards

from app.rules.errors import ErrorCode, RuleError
from app.services.auth import Player
from app.services.hub import Services
from app.services.social import Viewer


@dataclass
class Context:
    """What resolvers know about the caller."""

    services: Services
    request: Request | WebSocket
    response: Response | WebSocket | None
    player: Player | None = None
    token: str | None = None
    guards: Guards | None = None
    connection_params: dict[str, Any] | None = None
    # The infrastructure error that kept the caller's token (kept here) from being checked
    # (database down): operations that need a signed-in caller answer it (as UNAVAILABLE),
    # not UNAUTHENTICATED, until a check succeeds (a WebSocket outlives the outage).
    auth_failure: BaseException | None = None
    auth_token: str | None = None


def bearer_token(value: object) -> str | None:
    """The token of an `Authorization: Bearer <token>` value."""
    if not isinstance(value, str):
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def services_of(info: Info[Context, None]) -> Services:
    """The services behind the request."""
    return info.context.services


def require_player(info: Info[Context, None]) -> Player:
    """The signed-in caller, or UNAUTHENTICATED."""
    player = info.context.player
    if player is None and info.context.auth_failure is not None:
        raise info.context.auth_failure
    if player is None:
        raise RuleError(ErrorCode.UNAUTHENTICATED, "sign in first")
    return player


async def require_viewer(info: Info[Context, None]) -> Viewer:
    """The signed-in caller with the social facts that decide table access."""
    context = info.context
    if context.player is None and context.auth_failure is not None:
        # The token could not be checked when the connection began: check it now.
        context.player = await context.services.auth.authenticate(context.auth_token)
        context.auth_failure = None
    return await context.services.social.viewer(require_player(info))


def client_ip(info: Info[Context, None]) -> str:
    """The caller's IP address (as the ASGI server saw it)."""
    client = info.context.request.client
    return client.host if client is not None else "unknown"


@contextlib.contextmanager
def subscription_slot(info: Info[Context, None]) -> Iterator[None]:
    """Hold one of the caller's live-subscription slots for the life of a subscription."""
    guards = info.context.guards
    player = require_player(info)
    if guards is None:
        yield
        return
    with guards.subscription(player.id):
        yield
