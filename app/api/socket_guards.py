"""Per-player caps on live connections and subscriptions, and closing the WebSockets of
revoked or expired tokens."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass

from starlette.websockets import WebSocket

from app.api.transport.close_codes import CLOSE_UNAUTHORIZED
from app.rules.errors import ErrorCode, RuleError
from app.services.accounts.auth import AuthService, Player, hash_token


@dataclass(eq=False)
class Connection:
    """One signed-in WebSocket."""

    socket: WebSocket
    player_id: str
    token_hash: str
    expires_at: float


async def register_socket(
    guards: Guards, auth: AuthService, socket: WebSocket, player: Player, token: str
) -> bool:
    """Register a WebSocket signed in with `token` (its expiry comes from the check just
    made); False when the player already has too many connections."""
    expires = await auth.expiry(token)
    return guards.open(Connection(socket, player.id, hash_token(token), expires or 0.0))


class Guards:
    """What one server process knows about its live connections."""

    def __init__(self, connections_per_player: int, subscriptions_per_player: int) -> None:
        self.connections_per_player = connections_per_player
        self.subscriptions_per_player = subscriptions_per_player
        self._connections: dict[WebSocket, Connection] = {}
        self._subscriptions: dict[str, int] = {}

    def open(self, connection: Connection) -> bool:
        """Register a connection; False when the player already has too many."""
        count = sum(1 for c in self._connections.values() if c.player_id == connection.player_id)
        if count >= self.connections_per_player:
            return False
        self._connections[connection.socket] = connection
        return True

    def close(self, socket: WebSocket) -> None:
        """Forget a connection that ended."""
        self._connections.pop(socket, None)

    @contextlib.contextmanager
    def subscription(self, player_id: str) -> Iterator[None]:
        """Hold one of the player's subscription slots; RATE_LIMITED when none is left."""
        self.take_subscription(player_id)
        try:
            yield
        finally:
            self.give_back_subscription(player_id)

    def take_subscription(self, player_id: str) -> None:
        """Take one of the player's subscription slots; RATE_LIMITED when none is left."""
        count = self._subscriptions.get(player_id, 0)
        if count >= self.subscriptions_per_player:
            raise RuleError(
                ErrorCode.RATE_LIMITED,
                f"at most {self.subscriptions_per_player} live subscriptions per player",
            )
        self._subscriptions[player_id] = count + 1

    def give_back_subscription(self, player_id: str) -> None:
        """Give back a slot `take_subscription` took."""
        left = self._subscriptions.get(player_id, 1) - 1
        if left > 0:
            self._subscriptions[player_id] = left
        else:
            self._subscriptions.pop(player_id, None)

    async def close_token(self, token_hash: str, reason: str = "token revoked") -> None:
        """Close every connection signed in with this token."""
        doomed = [c for c in self._connections.values() if c.token_hash == token_hash]
        await self._close_all(doomed, reason)

    async def close_player(self, player_id: str, reason: str) -> None:
        """Close every connection of a player (all their tokens were revoked: a ban)."""
        doomed = [c for c in self._connections.values() if c.player_id == player_id]
        await self._close_all(doomed, reason)

    async def close_invalid(self, valid: Callable[[list[str]], Awaitable[set[str]]]) -> None:
        """Close connections whose token `valid` no longer accepts (revoked meanwhile)."""
        held = sorted({c.token_hash for c in self._connections.values()})
        still = await valid(held)
        doomed = [c for c in self._connections.values() if c.token_hash not in still]
        await self._close_all(doomed, "token revoked")

    async def close_expired(self) -> None:
        """Close connections whose token has expired."""
        now = time.time()
        doomed = [c for c in self._connections.values() if c.expires_at <= now]
        await self._close_all(doomed, "token expired")

    async def _close_all(self, doomed: list[Connection], reason: str) -> None:
        for connection in doomed:
            self._connections.pop(connection.socket, None)
            with contextlib.suppress(Exception):
                await connection.socket.close(code=CLOSE_UNAUTHORIZED, reason=reason)
        if doomed:
            await asyncio.sleep(0)
