"""Live streams: a table's game updates (with catch-up by `since`), the lobby, notices."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from app.broker.base import Broker
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game, Phase
from app.rules.seats import SEATS
from app.store import tables as repo

from .access import can_see, can_watch
from .codec import entry_move
from .ledger import LOBBY_CHANNEL, Ledger, game_channel
from .model import GameMessage, LobbyMessage, Occupant, TableSnapshot, TableStatus
from .social import Notice, NoticeKind, SocialService, Viewer, player_channel
from .tables import TableService, relation

SNAPSHOT = "SNAPSHOT"

LobbyEvent = tuple[str, str, TableSnapshot | None]


class Streams:
    """Subscriptions, each projected later for its own subscriber by the API layer."""

    def __init__(
        self, ledger: Ledger, broker: Broker[Any], tables: TableService, social: SocialService
    ) -> None:
        self.ledger = ledger
        self.broker = broker
        self.tables = tables
        self.social = social

    def check_viewer(self, viewer: Viewer, table: TableSnapshot) -> None:
        """A seated player, or a spectator where spectating is on; else FORBIDDEN."""
        rel = relation(viewer, table)
        if not rel.seated and not can_watch(table, rel):
            raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")

    async def game_updates(
        self, viewer: Viewer, table_id: str, since: int | None
    ) -> AsyncIterator[GameMessage]:
        """Every change of the table's game in order, after a SNAPSHOT or the missed updates.

        The stream ends with FORBIDDEN if the subscriber loses the right to watch (the host
        turned spectating off, or the table became invisible to them)."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self.check_viewer(viewer, table)
        # Subscribe before reading the current state: nothing published after it is lost.
        with self.broker.subscribe(game_channel(table_id)) as subscription:
            table = self.tables.visible(viewer, await self.ledger.get(table_id))
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
                    message = GameMessage(SNAPSHOT, None, current)
                elif message.version <= last:
                    continue
                self.check_viewer(viewer, self.tables.visible(viewer, message.table))
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
                if since < version <= table.version:
                    event = step.event.kind.value
                    out.append(_replayed(table, event, step.event.seat, step.state, version, names))
        return out

    async def _names(self, players: list[str], table: TableSnapshot) -> dict[str, str]:
        names = {o.player_id: o.username or "" for o in table.occupants if o is not None}
        missing = [p for p in players if p not in names and not p.startswith("bot:")]
        if missing:
            async with self.ledger.db.read() as session:
                names.update(await repo.usernames(session, missing))
        return names

    async def lobby_updates(self, viewer: Viewer) -> AsyncIterator[LobbyEvent]:
        """Lobby changes of tables the subscriber may see: a table appears (TABLE_CREATED)
        when it is created or comes into sight, changes (TABLE_UPDATED), or disappears
        (TABLE_REMOVED) when it finishes, closes or goes out of sight — including when the
        subscriber's friendships, blocks, invitations or links change."""
        channels = (LOBBY_CHANNEL, player_channel(viewer.id))
        with self.broker.subscribe(*channels) as subscription:
            visible = {t.id for t in await self.tables.lobby(viewer)}
            while True:
                message = await subscription.get()
                if isinstance(message, Notice):
                    viewer = await self.social.viewer(viewer.player)
                    now = {t.id: t for t in await self.tables.lobby(viewer)}
                    for table_id in sorted(now.keys() - visible):
                        yield ("TABLE_CREATED", table_id, now[table_id])
                    for table_id in sorted(visible - now.keys()):
                        yield ("TABLE_REMOVED", table_id, None)
                    visible = set(now)
                    continue
                routed = _route(viewer, message, visible)
                if routed is not None:
                    yield routed

    async def notifications(self, viewer: Viewer) -> AsyncIterator[Notice]:
        """The subscriber's own notifications (internal notices left out)."""
        with self.broker.subscribe(player_channel(viewer.id)) as subscription:
            while True:
                notice: Notice = await subscription.get()
                if notice.kind is not NoticeKind.SOCIAL_CHANGED:
                    yield notice


def _route(viewer: Viewer, message: LobbyMessage, visible: set[str]) -> LobbyEvent | None:
    table = message.table
    now = table.status.open and can_see(table, relation(viewer, table))
    before = table.id in visible
    if now:
        visible.add(table.id)
        return ("TABLE_UPDATED" if before else "TABLE_CREATED", table.id, table)
    if before:
        visible.discard(table.id)
        return ("TABLE_REMOVED", table.id, None)
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
    replayed = table.evolve(game=game, version=version, occupants=occupants, status=status)
    return GameMessage(event, seat, replayed)
