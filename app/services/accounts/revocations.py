"""Revoking every token of a player on every process at once (a ban).

The tokens are revoked in the database first (`auth.revoke_all`); then one broker
message tells every process, each of which drops the player's tokens from its
authentication cache, closes the player's WebSockets, and answers on the message's own
reply channel. The sender counts the processes the broker handed the message to and
waits for that many answers: once `revoke` returns, no process lets one of the tokens
through (a process that does not answer in time is stuck or gone; a process that
reconnects to the broker rechecks every token it holds)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from app.broker.base import Broker, Subscription
from app.services.accounts.auth import AuthService

log = logging.getLogger(__name__)

REVOKED_PLAYERS_CHANNEL = "revoked-players"
# How long a revocation waits for every process to answer.
ANSWER_WAIT_SECONDS = 3.0

# Called with (player id, reason) in every process when a player's tokens are revoked.
PlayerHandler = Callable[[str, str], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class PlayerRevoked:
    """Broker message: every token of `player_id` was revoked (`reason`: why, for the
    closing sockets); each process acts, then publishes `Heard` on `reply`."""

    player_id: str
    reason: str
    reply: str


@dataclass(frozen=True, slots=True)
class Heard:
    """Broker message: one process has acted on a `PlayerRevoked`."""

    reply: str


class PlayerRevocations:
    """Sends player revocations and acts on those of any process."""

    def __init__(self, broker: Broker[Any], auth: AuthService) -> None:
        self.broker = broker
        self.auth = auth
        self.handlers: list[PlayerHandler] = []
        self._listener: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Hear the revocations of every process (a server; a command-line tool only
        sends)."""
        subscription = await self.broker.subscribe(REVOKED_PLAYERS_CHANNEL)
        self._listener = asyncio.create_task(self._listen(subscription))

    async def stop(self) -> None:
        """Stop hearing revocations."""
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)

    async def revoke(self, player_id: str, reason: str) -> None:
        """Make every process drop the player's tokens and close their sockets; returns
        once each process the broker reached has done so (at most ANSWER_WAIT_SECONDS)."""
        reply = f"revocation-heard:{uuid.uuid4().hex}"
        try:
            with await self.broker.subscribe(reply) as answers:
                message = PlayerRevoked(player_id, reason, reply)
                receivers = await self.broker.publish_counted(REVOKED_PLAYERS_CHANNEL, message)
                await _await_answers(answers, receivers)
        except Exception:
            # The broker is down: this process acts now; the others recheck their tokens
            # when they reconnect, and each process's sanction watch finds the ban.
            log.warning("could not broadcast the revocation of a player", exc_info=True)
            await self.act(player_id, reason)

    async def act(self, player_id: str, reason: str) -> None:
        """In this process: forget the player's tokens and run the handlers (sockets)."""
        self.auth.forget_player(player_id)
        for handler in self.handlers:
            try:
                await handler(player_id, reason)
            except Exception:
                log.exception("a handler of a player's revocation failed")

    async def _listen(self, subscription: Subscription[Any]) -> None:
        with subscription:
            while True:
                message = await subscription.get()
                if not isinstance(message, PlayerRevoked):
                    continue  # RESYNC: the token recheck (Services) covers what was lost
                await self.act(message.player_id, message.reason)
                with contextlib.suppress(Exception):
                    await self.broker.publish(message.reply, Heard(message.reply))


async def _await_answers(answers: Subscription[Any], expected: int) -> None:
    deadline = time.monotonic() + ANSWER_WAIT_SECONDS
    heard = 0
    while heard < expected:
        left = deadline - time.monotonic()
        if left <= 0:
            log.warning("%d of %d processes confirmed a player's revocation", heard, expected)
            return
        try:
            message = await asyncio.wait_for(answers.get(), left)
        except TimeoutError:
            continue
        if isinstance(message, Heard):
            heard += 1
