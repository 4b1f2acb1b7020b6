"""Accounts and bearer tokens: sign up, sign in, authenticate."""

from __future__ import annotations

import asyncio
import hashlib
import random
import re
import secrets
import time
import uuid
from dataclasses import dataclass

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.errors import ErrorCode, RuleError
from app.settings import Settings
from app.store.db import Database
from app.store.models import PlayerRow, TokenRow
from app.store.moderation import active_ban, lock_player

USERNAME = re.compile(r"[A-Za-z0-9_-]{3,20}")
MIN_PASSWORD = 8
MAX_PASSWORD = 256  # hashing a huge password would be a free denial of service
# A checked token stays cached until its own expiry (read from its row), so a player is
# not re-read from the database however rarely they move: revocations drop it at once in
# every process (broadcast), and a broker that lost messages empties the cache
# (Services._recheck_tokens). The cache re-reads a token this often anyway, which only
# bounds how long a revocation lost without the broker noticing could be honoured.
TOKEN_CACHE_SECONDS = 900.0
# Entries live 50-100% of that, at random: tokens first seen together (a server restart,
# a tournament start) would otherwise all expire in the same second and be re-read at once.
TOKEN_CACHE_JITTER = 0.5
TOKEN_CACHE_MAX = 100_000
BAD_CREDENTIALS = "invalid username or password"
BANNED = "this account is banned"


@dataclass(frozen=True, slots=True)
class Player:
    """A signed-in player."""

    id: str
    username: str


@dataclass(frozen=True, slots=True)
class TokenRevoked:
    """Broker message: a token was revoked; every process drops it and closes its sockets."""

    token_hash: str


def hash_token(token: str) -> str:
    """Tokens are stored as SHA-256 digests: a leaked database holds no usable token."""
    return hashlib.sha256(token.encode()).hexdigest()


class AuthService:
    """Accounts, password hashing (argon2id) and token checks."""

    def __init__(self, db: Database, settings: Settings) -> None:
        self.db = db
        self.ttl = settings.token_ttl_days * 86400
        self.hasher = PasswordHasher(
            time_cost=settings.argon2_time_cost, memory_cost=settings.argon2_memory_kib
        )
        # A burned hash to verify against for unknown usernames, so sign-in takes as
        # long whether or not the username exists.
        self._dummy_hash = self.hasher.hash(secrets.token_hex(16))
        # token digest -> (player, cached until, the token's own expiry)
        self._cache: dict[str, tuple[Player, float, float]] = {}
        # Counts the revocations heard here: a token read from the database while one
        # was heard may have been read before it was committed, and is not cached.
        self._revocations = 0

    async def sign_up(self, username: str, password: str) -> tuple[str, Player]:
        """Create an account and sign it in."""
        if not isinstance(username, str) or not USERNAME.fullmatch(username):
            raise RuleError(
                ErrorCode.BAD_USER_INPUT,
                "a username is 3 to 20 letters, digits, '_' or '-'",
            )
        _check_password(password)
        password_hash = await asyncio.to_thread(self.hasher.hash, password)
        row = PlayerRow(
            id=uuid.uuid4().hex,
            username=username,
            username_key=username.lower(),
            password_hash=password_hash,
        )
        try:
            async with self.db.write() as session:
                existing = await session.exec(
                    select(PlayerRow.id).where(PlayerRow.username_key == row.username_key)
                )
                if existing.first() is not None:
                    raise RuleError(ErrorCode.BAD_USER_INPUT, "that username is taken")
                session.add(row)
        except IntegrityError as exc:
            raise RuleError(ErrorCode.BAD_USER_INPUT, "that username is taken") from exc
        player = Player(row.id, row.username)
        return await self._issue_token(player), player

    async def sign_in(self, username: str, password: str) -> tuple[str, Player]:
        """Check the password and issue a new token. Wrong username or password answer alike."""
        if not isinstance(password, str) or len(password) > MAX_PASSWORD:
            raise RuleError(ErrorCode.UNAUTHENTICATED, BAD_CREDENTIALS)
        key = username.lower() if isinstance(username, str) and len(username) <= 20 else ""
        async with self.db.read() as session:
            result = await session.exec(select(PlayerRow).where(PlayerRow.username_key == key))
            row = result.first()
        stored = row.password_hash if row is not None else self._dummy_hash
        ok = await asyncio.to_thread(self._verify, stored, password)
        if row is None or not ok:
            raise RuleError(ErrorCode.UNAUTHENTICATED, BAD_CREDENTIALS)
        player = Player(row.id, row.username)
        return await self._issue_token(player, check_ban=True), player

    def _verify(self, stored: str, password: str) -> bool:
        try:
            return self.hasher.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False

    async def _issue_token(self, player: Player, check_ban: bool = False) -> str:
        """A new token for the player; with `check_ban`, FORBIDDEN while they are banned.
        The check and the new token share a transaction that holds the player's row, as a
        ban does: a ban revokes this token, or this sign-in sees the ban."""
        token = secrets.token_urlsafe(32)
        async with self.db.write() as session:
            if check_ban:
                await lock_player(session, player.id)
                ban = await active_ban(session, player.id)
                if ban is not None:
                    raise RuleError(ErrorCode.FORBIDDEN, f"{BANNED}: {ban.reason}")
            session.add(
                TokenRow(
                    token_hash=hash_token(token),
                    player_id=player.id,
                    expires_at=time.time() + self.ttl,
                )
            )
        return token

    async def authenticate(self, token: str | None) -> Player | None:
        """The player a bearer token belongs to, or None if it is unknown, expired or revoked."""
        if not token or len(token) > 200:
            return None
        digest = hash_token(token)
        now = time.time()
        cached = self._cache.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        for _attempt in range(3):
            heard = self._revocations
            found = await self._read_token(digest)
            if heard == self._revocations:
                break
            # A revocation was heard during the read, which may predate its commit:
            # read again (it now shows), and cache nothing that crossed one.
        if found is None:
            return None
        token_row, player_row = found
        if token_row.revoked or token_row.expires_at <= now:
            return None
        player = Player(player_row.id, player_row.username)
        if heard != self._revocations:
            return player
        lifetime = TOKEN_CACHE_SECONDS * (1.0 - TOKEN_CACHE_JITTER * random.random())
        self._cache[digest] = (
            player,
            min(now + lifetime, token_row.expires_at),
            token_row.expires_at,
        )
        if len(self._cache) > TOKEN_CACHE_MAX:
            self._evict(now)
        return player

    async def _read_token(self, digest: str) -> tuple[TokenRow, PlayerRow] | None:
        async with self.db.read() as session:
            result = await session.exec(
                select(TokenRow, PlayerRow)
                .join(PlayerRow, PlayerRow.id == TokenRow.player_id)  # type: ignore[arg-type]
                .where(TokenRow.token_hash == digest)
            )
            return result.first()

    async def sign_out(self, token: str) -> bool:
        """Revoke a token (at once in this process; other processes hear of it through the
        broker and close that token's WebSockets)."""
        digest = hash_token(token)
        async with self.db.write() as session:
            row = await session.get(TokenRow, digest)
            if row is None:
                return False
            row.revoked = True
            session.add(row)
        self.forget(digest)
        return True

    def _evict(self, now: float) -> None:
        """Drop the entries past their time, then (still too many) the oldest half."""
        for digest, entry in list(self._cache.items()):
            if entry[1] <= now:
                del self._cache[digest]
        if len(self._cache) > TOKEN_CACHE_MAX // 2:
            for digest in list(self._cache)[: len(self._cache) // 2]:
                del self._cache[digest]

    def forget(self, token_hash: str) -> None:
        """Drop a token from the authentication cache (it was revoked)."""
        self._revocations += 1
        self._cache.pop(token_hash, None)

    def forget_player(self, player_id: str) -> None:
        """Drop every token of a player from the authentication cache (all revoked)."""
        self._revocations += 1
        for digest in [d for d, entry in self._cache.items() if entry[0].id == player_id]:
            del self._cache[digest]

    def forget_all(self) -> None:
        """Empty the authentication cache (revocations may have been missed)."""
        self._revocations += 1
        self._cache.clear()

    async def valid_digests(self, token_hashes: list[str]) -> set[str]:
        """Those of the given token digests whose token is neither revoked nor expired."""
        if not token_hashes:
            return set()
        async with self.db.read() as session:
            result = await session.exec(
                select(TokenRow.token_hash).where(
                    col(TokenRow.token_hash).in_(token_hashes),
                    col(TokenRow.revoked).is_(False),
                    col(TokenRow.expires_at) > time.time(),
                )
            )
            return set(result.all())

    async def expiry(self, token: str) -> float | None:
        """When a valid token expires (epoch seconds), or None if it is not valid. Right
        after `authenticate` it comes from the cache, without a second read."""
        cached = self._cache.get(hash_token(token))
        if cached is not None and cached[1] > time.time():
            return cached[2]
        async with self.db.read() as session:
            row = await session.get(TokenRow, hash_token(token))
        if row is None or row.revoked or row.expires_at <= time.time():
            return None
        return row.expires_at


async def revoke_all(session: AsyncSession, player_id: str) -> None:
    """Revoke every token of a player (inside the caller's transaction, which holds the
    player's row: see `AuthService._issue_token`)."""
    await session.exec(
        update(TokenRow)
        .where(col(TokenRow.player_id) == player_id, col(TokenRow.revoked).is_(False))
        .values(revoked=True)
    )


def _check_password(password: str) -> None:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise RuleError(
            ErrorCode.BAD_USER_INPUT, f"a password has at least {MIN_PASSWORD} characters"
        )
    if len(password) > MAX_PASSWORD:
        raise RuleError(
            ErrorCode.BAD_USER_INPUT, f"a password has at most {MAX_PASSWORD} characters"
        )
