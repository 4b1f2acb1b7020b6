"""Live streams: a table's game updates (with catch-up by `since`) and the lobby."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from app.broker.base import Broker
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game, Phase
from app.rules.seats import SEATS
from app.store import tables as repo

from .access import can_see, can_watch
from .auth import Player
from .codec import entry_move
from .ledger import LOBBY_CHANNEL, Ledger, game_channel
from .model import GameMessage, LobbyMessage, Occupant, TableSnapshot, TableStatus
from .tables import TableService

SNAPSHOT = "SNAPSHOT"


class Streams:
    """Subscriptions, each projected later for its own subscriber by the API layer."""

    def __init__(self, ledger: Ledger, broker: Broker[Any], tables: TableService) -> None:
        self.ledger = ledger
        self.broker = broker
        self.tables = tables

    def check_viewer(self, player: Player, table: TableSnapshot) -> None:
        """A seated player, or a spectator where spectating is on; else FORBIDDEN."""
        rel = self.tables.relation(player, table)
        if not rel.seated and not can_watch(table, rel):
            raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")

    async def game_updates(
        self, player: Player, table_id: str, since: int | None
    ) -> AsyncIterator[GameMessage]:
        """Every change of the table's game in order, after a SNAPSHOT or the missed updates."""
        table = await self.tables.get_visible(player, table_id)
        self.check_viewer(player, table)
        # Subscribe before reading the current state: nothing published after it is lost.
        with self.broker.subscribe(game_channel(table_id)) as subscription:
            table = self.tables.visible(player, await self.ledger.get(table_id))
            missed = await self._missed(table, since) if since is not None else None
            if missed is None:
                yield GameMessage(SNAPSHOT, None, table)
                last = table.version
            else:
                last = since if since is not None else table.version
                for message in missed:
                    yield message
                    last = message.version
            while True:
                message = await subscription.get()
                if subscription.lagged or message.version > last + 1:
                    subscription.drain()
                    current = await self.ledger.get(table_id)
                    if current is None:
                        return
                    yield GameMessage(SNAPSHOT, None, current)
                    last = current.version
                    continue
                if message.version <= last:
                    continue
                yield message
                last = message.version

    async def _missed(self, table: TableSnapshot, since: int) -> list[GameMessage] | None:
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
        if since < start_seq:
            out.append(_replayed(table, "GAME_STARTED", SEATS[0], game.copy(), start_seq, names))
        for seq, _changes, log_entry in log:
            if seq <= start_seq:
                continue
            move = entry_move(log_entry)
            if move is None:
                continue
            for offset, step in enumerate(game.apply_steps(move)):
                version = seq + offset
                if version > since and version <= table.version:
                    out.append(
                        _replayed(
                            table,
                            step.event.kind.value,
                            step.event.seat,
                            step.state,
                            version,
                            names,
                        )
                    )
        return out

    async def _names(self, players: list[str], table: TableSnapshot) -> dict[str, str]:
        names = {o.player_id: o.username or "" for o in table.occupants if o is not None}
        missing = [p for p in players if p not in names and not p.startswith("bot:")]
        if missing:
            async with self.ledger.db.read() as session:
                names.update(await repo.usernames(session, missing))
        return names

    async def lobby_updates(self, player: Player) -> AsyncIterator[tuple[str, TableSnapshot]]:
        """Lobby changes of tables `player` may see: appearing, changing, disappearing."""
        with self.broker.subscribe(LOBBY_CHANNEL) as subscription:
            while True:
                message: LobbyMessage = await subscription.get()
                routed = self._route(player, message)
                if routed is not None:
                    yield routed

    def _route(self, player: Player, message: LobbyMessage) -> tuple[str, TableSnapshot] | None:
        table = message.table
        now = table.status.open and can_see(table, self.tables.relation(player, table))
        before_table = message.previous
        before = (
            before_table is not None
            and before_table.status.open
            and can_see(before_table, self.tables.relation(player, before_table))
        )
        if message.event == "TABLE_CREATED":
            return ("TABLE_CREATED", table) if now else None
        if now and before:
            return ("TABLE_UPDATED", table)
        if now:
            return ("TABLE_CREATED", table)
        if before:
            return ("TABLE_REMOVED", table)
        return None


def _replayed(
    table: TableSnapshot,
    event: str,
    seat: Any,
    game: Game,
    version: int,
    names: dict[str, str],
) -> GameMessage:
    occupants = tuple(
        Occupant.bot(s)
        if game.players[s].startswith("bot:")
        else Occupant(game.players[s], names.get(game.players[s]))
        for s in SEATS
    )
    status = TableStatus.FINISHED if game.phase is Phase.GAME_OVER else TableStatus.PLAYING
    return GameMessage(
        event, seat, table.evolve(game=game, version=version, occupants=occupants, status=status)
    )
