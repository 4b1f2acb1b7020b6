"""Per-request (HTTP) and per-connection (WebSocket) context: who is calling.

For a WebSocket the context lives as long as the connection, so it holds the
signed-in player and the services only: no database session, no caches.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.types import Info

from app.api.socket_guards import Guards, register_socket
from app.rules.errors import ErrorCode, RuleError
from app.services.accounts.auth import Player
from app.services.container import Services
from app.services.social.model import Viewer


@dataclass
class Context:
    """What resolvers know about the caller."""

    services: Services
    request: Request | WebSocket
    response: Response | WebSocket | None
    guards: Guards
    player: Player | None = None
    # The token the caller presented (checked: `player` is set, or not yet: see below).
    token: str | None = None
    connection_params: dict[str, Any] | None = None
    # The infrastructure error that kept `token` from being checked (database down):
    # operations that need a signed-in caller answer it (as UNAVAILABLE), not
    # UNAUTHENTICATED, until a check succeeds (a WebSocket outlives the outage).
    auth_failure: BaseException | None = None


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


async def require_player(info: Info[Context, None]) -> Player:
    """The signed-in caller, or UNAUTHENTICATED (UNAVAILABLE while the token cannot be
    checked)."""
    context = info.context
    if context.player is None and context.auth_failure is not None:
        await _check_late(context)
    if context.player is None:
        raise RuleError(ErrorCode.UNAUTHENTICATED, "sign in first")
    return context.player


async def _check_late(context: Context) -> None:
    """Check a token the database could not check when the request or connection began;
    a WebSocket is then registered as it would have been on connecting."""
    player = await context.services.auth.authenticate(context.token)  # may fail again
    context.auth_failure = None
    if player is None or context.token is None:
        context.token = None
        return
    if isinstance(context.request, WebSocket) and not await register_socket(
        context.guards, context.services.auth, context.request, player, context.token
    ):
        raise RuleError(ErrorCode.RATE_LIMITED, "too many connections for this player")
    context.player = player


async def require_viewer(info: Info[Context, None]) -> Viewer:
    """The signed-in caller with the social facts that decide table access."""
    return await info.context.services.social.viewer(await require_player(info))


def client_ip(info: Info[Context, None]) -> str:
    """The caller's IP address (as the ASGI server saw it)."""
    client = info.context.request.client
    return client.host if client is not None else "unknown"


class SubscriptionSlot:
    """One of the caller's live-subscription slots, counted in a gauge, held until
    `release` (a subscription that parks keeps it with no frame to hold a `with`)."""

    __slots__ = ("_gauge", "_guards", "_player_id")

    def __init__(self, info: Info[Context, None], gauge: Any) -> None:
        player = info.context.player
        if player is None:
            raise RuleError(ErrorCode.UNAUTHENTICATED, "sign in first")
        guards = info.context.guards
        guards.take_subscription(player.id)
        gauge.inc()
        self._guards: Guards | None = guards
        self._player_id = player.id
        self._gauge = gauge

    def release(self) -> None:
        """Give the slot back (once)."""
        guards, self._guards = self._guards, None
        if guards is not None:
            guards.give_back_subscription(self._player_id)
            self._gauge.dec()


@contextlib.contextmanager
def subscription_slot(info: Info[Context, None]) -> Iterator[None]:
    """Hold one of the caller's live-subscription slots for the life of a subscription
    (the caller is signed in: `require_viewer` came first)."""
    player = info.context.player
    if player is None:
        raise RuleError(ErrorCode.UNAUTHENTICATED, "sign in first")
    with info.context.guards.subscription(player.id):
        yield
