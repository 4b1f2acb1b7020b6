"""The change one engine move makes to a table: the one path of every game move, a
player's, a bot's or one the clock makes for an absent player."""

from __future__ import annotations

from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Phase
from app.rules.movelog import move_entry
from app.rules.moves import Move
from app.services.tables.change import Change
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.snapshot import TableSnapshot, TableStatus, now_ts

# Events after which the lobby's copy of a table (scores, phase) is stale.
LOBBY_WORTHY = frozenset({GameEvent.HAND_SCORED, GameEvent.GAME_OVER})


def apply_move(table: TableSnapshot, move: Move) -> Change:
    """The change one engine move makes to a table: one step per event it caused."""
    if table.game is None:
        raise RuleError(ErrorCode.WRONG_PHASE, "the game has not started")
    if table.status is TableStatus.CLOSED:
        raise RuleError(ErrorCode.WRONG_PHASE, "the table is closed")
    game = table.game.copy()
    steps = game.apply_steps(move)
    change = Change()
    version = table.version
    for step in steps:
        version += 1
        over = step.state.phase is Phase.GAME_OVER
        status = TableStatus.FINISHED if over else table.status
        event = GameEvent.of(step.event.kind)
        # When the game ended starts the rematch window (docs/rules.md, Rematch).
        finished_at = now_ts() if over else table.finished_at
        change.add(
            event,
            table.evolve(game=step.state, version=version, status=status, finished_at=finished_at),
            step.event.seat,
        )
        if event in LOBBY_WORTHY:
            change.lobby_event = LobbyEvent.TABLE_REMOVED if over else LobbyEvent.TABLE_UPDATED
    change.log_entry(table.version + 1, len(steps), move_entry(move))
    return change
