"""Per-request (HTTP) and per-connection (WebSocket) context: who is calling.

For a WebSocket the context lives as long as the connection, so it holds the
signed-in player and the services only: no database session, no caches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.types import Info

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
    connection_params: dict[str, Any] | None = None


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
    if player is None:
        raise RuleError(ErrorCode.UNAUTHENTICATED, "sign in first")
    return player


async def require_viewer(info: Info[Context, None]) -> Viewer:
    """The signed-in caller with the social facts that decide table access."""
    return await info.context.services.social.viewer(require_player(info))
