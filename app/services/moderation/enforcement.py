"""What a ban does, at once and on every process (docs/rules.md, Moderation), once it is
stored with the player's tokens revoked:

1. every process drops the player's tokens from its cache and closes their sockets
   (4401), and the ban waits until each has (`PlayerRevocations.revoke`);
2. at every unfinished table the player is taken off through the ledger's
   compare-and-swap (`lobby.expel`): a move of theirs either applied before that change
   or is refused after it, so none applies once the ban is acknowledged;
3. the `on_ban` handlers run (a searching quick-play ticket ends CANCELLED there).

Each process also watches the sanctions table (`look`, every few seconds, one indexed
query when nothing happens): a ban stored where it could not hear of it (the `spades
admin` command without a broker, a lost broker message) is still carried out here within
seconds, and a seat a banned player took in a request already under way when the ban
landed is taken back."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

from app.rules.errors import ErrorCode, RuleError
from app.services.accounts.revocations import PlayerRevocations
from app.services.lobby.expel import expel
from app.services.tables.ledger import Ledger
from app.store import moderation as store
from app.store.db import Database

log = logging.getLogger(__name__)

# The reason a banned player's sockets are closed with (the web client tells them).
BANNED_CLOSE_REASON = "account banned"
EXPEL_ATTEMPTS = 3
# How long after finding a ban each process keeps checking that the player holds no seat:
# longer than any request that authenticated before the ban can still be under way.
RECHECK_SECONDS = 60.0

# Called with the banned player's id after the ban took effect (see `on_ban`).
BanHandler = Callable[[str], Awaitable[None]]


class BanEnforcement:
    """Carries bans out, in this process and (through the broker) in every other."""

    def __init__(
        self,
        db: Database,
        ledger: Ledger,
        revocations: PlayerRevocations,
        watch_seconds: float = 2.0,
    ) -> None:
        self.db = db
        self.ledger = ledger
        self.revocations = revocations
        self.watch_seconds = watch_seconds
        # Hook for the other contexts a ban ends something in, called with the banned
        # player's id once their tokens and seats are gone: quick play registers the
        # cancelling of their SEARCHING ticket here. A handler runs in the process that
        # carried the ban out and again in every process that finds it (`look`): it must
        # be idempotent.
        self.on_ban: list[BanHandler] = []
        self._seen = 0
        self._first_look = True
        # Players banned a moment ago (when this process found the ban), rechecked by
        # each look for RECHECK_SECONDS.
        self._recent: dict[str, float] = {}
        self._watch: asyncio.Task[None] | None = None

    async def enforce(self, player_id: str) -> None:
        """Everything a stored ban does, before the ban is acknowledged."""
        await self.revocations.revoke(player_id, BANNED_CLOSE_REASON)
        await self._carry_out(player_id)

    async def _carry_out(self, player_id: str) -> None:
        """Take the player off every unfinished table, then run the `on_ban` handlers."""
        async with self.db.read() as session:
            tables = await store.open_tables_of(session, player_id)
        for table_id in tables:
            await self._expel(table_id, player_id)
        for handler in self.on_ban:
            try:
                await handler(player_id)
            except Exception:
                log.exception("a handler of a ban failed")

    async def _expel(self, table_id: str, player_id: str) -> None:
        for _attempt in range(EXPEL_ATTEMPTS):
            try:
                await expel(self.ledger, table_id, player_id)
                return
            except RuleError as refusal:
                # CONFLICT: the table kept moving; anything else: it is gone or closed.
                if refusal.code is not ErrorCode.CONFLICT:
                    return
        log.warning("could not take a banned player off table %s yet", table_id)

    # ------------------------------------------------------------------ the watch

    async def start(self) -> None:
        """Watch for bans stored from now on (every `watch_seconds`)."""
        async with self.db.read() as session:
            self._seen = await store.last_sanction_seq(session)
        self._watch = asyncio.create_task(self._watch_forever())

    async def stop(self) -> None:
        """Stop watching."""
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)

    async def _watch_forever(self) -> None:
        while True:
            await asyncio.sleep(self.watch_seconds)
            with contextlib.suppress(Exception):
                await self.look()

    async def look(self) -> None:
        """One look (idle, a single indexed query): carry out here the bans stored since
        the last one, all of it idempotent (most were carried out already by the process
        that stored them); for a while after each, take the player off any seat a request
        already under way gave them; on the first look, off any seat a banned player
        still holds (a process that stopped in the middle of a ban)."""
        async with self.db.read() as session:
            bans = await store.bans_after(session, self._seen)
            held = await store.seats_of_banned(session) if self._first_look else []
        self._first_look = False
        now = time.monotonic()
        for ban in bans:
            self._seen = max(self._seen, ban.seq or 0)
            if ban.lifted_at is None:
                await self.revocations.act(ban.player_id, BANNED_CLOSE_REASON)
                await self._carry_out(ban.player_id)
                self._recent[ban.player_id] = now
        for table_id, player_id in held:
            await self._expel(table_id, player_id)
        for player_id, since in list(self._recent.items()):
            if now - since > RECHECK_SECONDS:
                del self._recent[player_id]
            elif since != now:
                await self._recheck(player_id)

    async def _recheck(self, player_id: str) -> None:
        """Take a player banned a moment ago off any seat they hold (still banned)."""
        async with self.db.read() as session:
            banned = await store.active_ban(session, player_id) is not None
            tables = await store.open_tables_of(session, player_id) if banned else []
        for table_id in tables:
            await self._expel(table_id, player_id)
