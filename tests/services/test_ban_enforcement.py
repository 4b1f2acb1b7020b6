"""The parts of a ban below the server: taking a player off a table in every state it can
be in, the token cache that must not keep a token read while it was being revoked, and a
revocation that returns only once every process has acted on it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from app.broker.memory import MemoryBroker
from app.rules.game import Game
from app.rules.seats import Seat
from app.services.accounts import revocations as revocations_module
from app.services.accounts.auth import AuthService, TokenRow, hash_token
from app.services.accounts.revocations import PlayerRevocations
from app.services.lobby.expel import expel_decision
from app.services.tables.events import GameEvent
from app.services.tables.snapshot import Occupant, TableStatus
from app.settings import Settings
from app.store.db import Database
from app.store.migrate import upgrade
from tests.support.tables import PLAYERS, table_snapshot

CHEAP = {"argon2_time_cost": 1, "argon2_memory_kib": 1024}


def auth_over(folder: Path) -> AuthService:
    """An authentication service over an (unmigrated) SQLite file it never touches."""
    url = f"sqlite+aiosqlite:///{folder / 'unused.db'}"
    return AuthService(Database(url), Settings(database_url=url, **CHEAP))  # type: ignore[arg-type]


def playing(**fields: Any) -> Any:
    """The four players' table with its game under way."""
    game, _ = Game.start(list(PLAYERS), seed=3)
    return table_snapshot(**({"status": TableStatus.PLAYING, "game": game} | fields))


def test_mid_game_a_bot_takes_the_banned_players_seat_for_good_and_the_host_passes_on() -> None:
    change = expel_decision(playing(), "p0")
    (step,) = change.steps
    assert step.event is GameEvent.PLAYER_REPLACED and step.seat is Seat.NORTH
    after = step.table
    assert after.occupants[Seat.NORTH] is not None and after.occupants[Seat.NORTH].is_bot
    assert after.away_seat("p0") is None and after.host_id == "p1"
    assert after.status is TableStatus.PLAYING


def test_an_away_banned_player_gives_up_the_seat_a_bot_holds_for_them() -> None:
    occupants = list(table_snapshot().occupants)
    occupants[Seat.SOUTH] = Occupant.bot(Seat.SOUTH)
    away: list[Occupant | None] = [None, None, Occupant("p2", "p2"), None]
    change = expel_decision(playing(occupants=tuple(occupants), away=tuple(away)), "p2")
    (step,) = change.steps
    assert step.event is GameEvent.PLAYER_REPLACED and step.table.away_seat("p2") is None


def test_before_the_game_the_seat_is_emptied_and_the_host_passes_clockwise_from_north() -> None:
    occupants = (Occupant("p0", "p0"), None, Occupant("p2", "p2"), Occupant("p3", "p3"))
    step = expel_decision(table_snapshot(occupants=occupants), "p0").steps[0]
    assert step.event is GameEvent.SEAT_LEFT and step.table.occupants[Seat.NORTH] is None
    assert step.table.host_id == "p2"


def test_the_last_human_banned_closes_the_table_and_a_stranger_changes_nothing() -> None:
    alone = table_snapshot(occupants=(Occupant("p0", "p0"), Occupant.bot(Seat.EAST), None, None))
    assert expel_decision(alone, "p0").steps[-1].table.status is TableStatus.CLOSED
    assert not expel_decision(alone, "someone else").steps
    finished = playing(status=TableStatus.FINISHED)
    assert not expel_decision(finished, "p0").steps


async def test_a_token_read_while_its_revocation_is_heard_is_not_let_through(
    tmp_path: Path,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'auth.db'}"
    await asyncio.to_thread(upgrade, url)
    db = Database(url)
    auth = AuthService(db, Settings(database_url=url, **CHEAP))  # type: ignore[arg-type]
    try:
        token, player = await auth.sign_up("racer", "password123")
        read = auth._read_token

        async def read_then_revoked(digest: str) -> Any:
            # The read saw the token valid; meanwhile the ban committed and its broadcast
            # arrived here (before this read's answer was used).
            found = await read(digest)
            async with db.write() as session:
                row = await session.get(TokenRow, hash_token(token))
                assert row is not None
                row.revoked = True
                session.add(row)
            auth.forget_player(player.id)
            auth._read_token = read  # type: ignore[method-assign]
            return found

        auth._read_token = read_then_revoked  # type: ignore[method-assign]
        assert await auth.authenticate(token) is None
        assert await auth.authenticate(token) is None  # and nothing was cached
    finally:
        await db.dispose()


async def test_a_revocation_returns_once_every_process_has_acted_on_it(tmp_path: Path) -> None:
    broker: MemoryBroker[Any] = MemoryBroker()
    processes = [PlayerRevocations(broker, auth_over(tmp_path)) for _ in range(2)]
    acted: list[tuple[int, str]] = []

    def handler(number: int) -> Any:
        async def act(player_id: str, reason: str) -> None:
            await asyncio.sleep(0.2 * number)  # the second process is slower
            acted.append((number, player_id))

        return act

    for number, process in enumerate(processes):
        process.handlers.append(handler(number))
        await process.start()
    try:
        await processes[0].revoke("p1", "account banned")
        assert sorted(acted) == [(0, "p1"), (1, "p1")]
    finally:
        for process in processes:
            await process.stop()


async def test_a_process_that_never_answers_holds_a_revocation_only_so_long(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(revocations_module, "ANSWER_WAIT_SECONDS", 0.3)
    broker: MemoryBroker[Any] = MemoryBroker()
    sender = PlayerRevocations(broker, auth_over(tmp_path))
    with await broker.subscribe(revocations_module.REVOKED_PLAYERS_CHANNEL):  # a stuck one
        started = time.monotonic()
        await sender.revoke("p1", "account banned")
        assert 0.25 < time.monotonic() - started < 2
