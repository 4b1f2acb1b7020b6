"""The updates a subscriber missed, rebuilt from a table's move log: what `since`
replays, and how a subscription catches up after a gap."""

from __future__ import annotations

from typing import Any

from app.rules.game import Game, Phase
from app.rules.levels import DEFAULT_BOT_LEVEL, BotLevel
from app.rules.movelog import REMATCH_ENTRIES, entry_move
from app.rules.seats import SEATS, Seat
from app.services.play.rematch import replayed_rematch
from app.services.tables.events import GameEvent
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import NO_AWAY, GameMessage, Occupant, TableSnapshot, TableStatus
from app.store import table_rows as repo

# The replayed event of the mid-game log entries that change the table, not the game.
_TABLE_EVENTS = {
    "timeout": GameEvent.TURN_TIMED_OUT,
    "release": GameEvent.PLAYER_REPLACED,
    "close": GameEvent.TABLE_CLOSED,
}


class MoveLogReplay:
    """Rebuilds a table's past updates from its move log."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def missed(self, table: TableSnapshot, since: int) -> list[GameMessage] | None:
        """The updates after `since` up to the table's version, rebuilt from the move log;
        None when they cannot be replayed (before the game started, or a future version)."""
        if since > table.version or since < 0:
            return None
        if since == table.version:
            return []
        log = await self.ledger.moves(table.id)
        start = next(((seq, e) for seq, _, e in log if e["type"] == "start"), None)
        if start is None or since < start[0] - 1:
            return None
        start_seq, entry = start
        game, _ = Game.start(entry["players"], seed=int(entry["seed"]))
        game.seed_public = bool(entry["public"])
        names = await self._names(entry["players"], table)
        out: list[GameMessage] = []
        away: list[Occupant | None] = list(NO_AWAY)
        asked: tuple[Seat, ...] = ()
        if since < start_seq:
            out.append(
                _replayed(table, GameEvent.GAME_STARTED, SEATS[0], game.copy(), start_seq, names)
            )
        for seq, _changes, log_entry in log:
            if seq <= start_seq:
                continue
            kind = log_entry["type"]
            if kind in REMATCH_ENTRIES:
                message, asked = replayed_rematch(table, log_entry, seq, asked)
                if since < seq <= table.version:
                    out.append(message)
                continue
            if "away" in log_entry:  # a bot stands in for an absent human from here on
                absent = log_entry["away"]
                away[Seat[log_entry["seat"]]] = Occupant(absent, names.get(absent))
            elif kind in ("reclaim", "release"):
                away[Seat[log_entry["seat"]]] = None
            if kind in _TABLE_EVENTS and since < seq <= table.version:
                seat = Seat[log_entry["seat"]] if "seat" in log_entry else None
                event = _TABLE_EVENTS[kind]
                out.append(_replayed(table, event, seat, game.copy(), seq, names, away))
                continue
            move = entry_move(log_entry)
            if move is None:
                continue
            for offset, step in enumerate(game.apply_steps(move)):
                version = seq + offset
                if since < version <= table.version:
                    event = GameEvent.of(step.event.kind)
                    if kind == "reclaim":
                        event = GameEvent.SEAT_RECLAIMED
                    out.append(
                        _replayed(table, event, step.event.seat, step.state, version, names, away)
                    )
        return out

    async def _names(self, players: list[str], table: TableSnapshot) -> dict[str, str]:
        names = {o.player_id: o.username or "" for o in table.occupants if o is not None}
        missing = [p for p in players if p not in names and not p.startswith("bot:")]
        if missing:
            async with self.ledger.db.read() as session:
                names.update(await repo.usernames(session, missing))
        return names


def _replayed(
    table: TableSnapshot,
    event: GameEvent,
    seat: Any,
    game: Game,
    version: int,
    names: dict[str, str],
    away: list[Occupant | None] | None = None,
) -> GameMessage:
    occupants = tuple(
        Occupant.bot(s, _bot_level(table, s))
        if game.players[s].startswith("bot:")
        else Occupant(game.players[s], names.get(game.players[s]))
        for s in SEATS
    )
    status = TableStatus.FINISHED if game.phase is Phase.GAME_OVER else TableStatus.PLAYING
    if event is GameEvent.TABLE_CLOSED:
        status = TableStatus.CLOSED
    # Only the current version's deadline is known; a replayed older turn shows none.
    deadline = table.turn_deadline if version == table.version else None
    replayed = table.evolve(
        game=game,
        version=version,
        occupants=occupants,
        status=status,
        turn_deadline=deadline,
        away=tuple(away) if away is not None else NO_AWAY,
        rematch_requests=(),
        next_table_id=None,
    )
    return GameMessage(event, seat, replayed)


def _bot_level(table: TableSnapshot, seat: Seat) -> BotLevel:
    """The level of the bot in `seat` as the table has it now (BASIC if it has none)."""
    occupant = table.occupants[seat]
    if occupant is not None and occupant.bot_level is not None:
        return occupant.bot_level
    return DEFAULT_BOT_LEVEL
