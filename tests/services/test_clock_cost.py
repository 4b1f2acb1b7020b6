"""Turn clocks cost neither a task nor a database query per table per second:
one heap of deadlines and one timer task per process, and one indexed query a second for
overdue ones (and, alone with its database, one row read a second for operator changes),
whatever the number of timed tables. Counted on the service layer over a
real SQLite file (the figures for 10,000 tables come from scripts/bench_clocks.py)."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import event

from app.rules.game import Game
from app.services.container import Services
from app.services.social.model import Viewer
from app.services.tables.deadlines import clocked
from app.services.tables.snapshot import (
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
)
from app.settings import Settings

TABLES = 200
IDLE_SECONDS = 3.0
SCALE = 100.0  # 300-second clocks last hours: none runs out while counting


async def players(services: Services) -> list[Viewer]:
    viewers = []
    for i in range(4):
        _, player = await services.auth.sign_up(f"clock{i}", "pw123456")
        viewers.append(await services.social.viewer(player))
    return viewers


async def timed_table(services: Services, seated: list[Viewer]) -> None:
    """A started game of four humans, EAST's timed turn to bid, stored and armed as the
    change that started it would have armed it."""
    game, _ = Game.start([v.id for v in seated])
    table = TableSnapshot(
        id=uuid.uuid4().hex,
        name=None,
        host_id=seated[0].id,
        host_name=seated[0].player.username,
        visibility=Visibility.PUBLIC,
        join_policy=JoinPolicy.OPEN,
        spectating=True,
        status=TableStatus.PLAYING,
        version=5,
        occupants=tuple(Occupant(v.id, v.player.username) for v in seated),
        game=game,
        created_at=time.time(),
        turn_seconds=300,
    )
    table = clocked(table, time.time(), SCALE)
    await services.ledger.create(table)
    services.clocks.arm(table)


async def test_timed_tables_cost_no_task_and_no_query_per_table(tmp_path: Path) -> None:
    settings = Settings(
        turn_clock_scale=SCALE,
        database_url=f"sqlite+aiosqlite:///{tmp_path / 'clocks.db'}",
        argon2_time_cost=1,
        argon2_memory_kib=1024,
        rate_limits=False,
        log_level="warning",
        # Quick play's waves (a few statements a second) are not what this measures.
        quickplay_wave_seconds=3600.0,
    )
    services = Services(settings)
    await services.start()
    statements: list[str] = []

    def counted(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        statements.append(statement)

    try:
        seated = await players(services)
        await asyncio.sleep(0.2)
        tasks_before = len(asyncio.all_tasks())
        for _ in range(TABLES):
            await timed_table(services, seated)
        assert services.clocks.armed == TABLES
        assert len(asyncio.all_tasks()) <= tasks_before + 2  # not one per table

        engine = services.db.engine.sync_engine
        event.listen(engine, "before_cursor_execute", counted)
        await asyncio.sleep(IDLE_SECONDS)
        event.remove(engine, "before_cursor_execute", counted)
    finally:
        await services.stop()
    assert services.clocks.fired == 0  # nothing ran out
    # About one sweep a second, one look at the operator changes' counter (alone with its
    # database, app/services/live/outside_changes.py), presence's rare idle-table look-up
    # and moderation's look for bans every few seconds: not one per table.
    looks = IDLE_SECONDS / settings.moderation_watch_seconds + 1
    assert 1 <= len(statements) <= 4 * IDLE_SECONDS + 3 + 3 * looks, statements
