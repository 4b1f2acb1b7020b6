"""Count the games that finished before careers existed (run once, by the migration that
creates the career tables): each finished table's move log is replayed through the
engine and its lines are added to the statistics and game summaries, unrated."""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.engine import Connection

from app.rules.movelog import replay_log
from app.store import career as store
from app.store.models import MoveRow, TableRow

log = logging.getLogger(__name__)

_TABLES = TableRow.__table__  # type: ignore[attr-defined]
_MOVES = MoveRow.__table__  # type: ignore[attr-defined]
BATCH = 500


def backfill_finished_games(connection: Connection) -> int:
    """Add every finished game (oldest first) to the careers; returns how many."""
    tables = connection.execute(
        select(_TABLES.c.id, _TABLES.c.updated_at)
        .where(_TABLES.c.status == "FINISHED")
        .order_by(_TABLES.c.updated_at, _TABLES.c.id)
    ).all()
    totals: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(store.STAT_FIELDS, 0))
    results: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    seq = 0
    for table_id, finished_at in tables:
        entries = [
            json.loads(m)
            for (m,) in connection.execute(
                select(_MOVES.c.move).where(_MOVES.c.table_id == table_id).order_by(_MOVES.c.seq)
            )
        ]
        try:
            replayed = replay_log(entries)
        except Exception:  # a log the engine refuses cannot be counted; say so, go on
            log.warning("finished table %s does not replay: not counted", table_id, exc_info=True)
            continue
        if replayed is None:
            continue
        _, lines = replayed
        seq += 1
        game = store.FinishedGame(table_id, seq, finished_at, rated=False)
        results.append(
            {"table_id": table_id, "seq": seq, "finished_at": finished_at, "rated": False}
        )
        for line in lines:
            for name, value in store.stats_values(line).items():
                totals[line.player_id][name] += value
            summaries.append(store.summary_values(game, line, None, None))
    batches: list[tuple[Any, list[dict[str, Any]]]] = [
        (store.GameResultRow.__table__, results),  # type: ignore[attr-defined]
        (store.GameSummaryRow.__table__, summaries),  # type: ignore[attr-defined]
        (
            store.PlayerStatsRow.__table__,  # type: ignore[attr-defined]
            [{"player_id": p, **t} for p, t in totals.items()],
        ),
    ]
    for table, rows in batches:
        for start in range(0, len(rows), BATCH):
            connection.execute(insert(table), rows[start : start + BATCH])
    connection.execute(
        insert(store.CounterRow.__table__).values(name=store.GAMES_COUNTER, value=seq)  # type: ignore[attr-defined]
    )
    return seq
