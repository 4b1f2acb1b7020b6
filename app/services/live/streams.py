"""Live streams: a table's game updates (with catch-up by `since`), the lobby, notices."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Any

from app.broker.base import RESYNC, Broker
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game, Phase
from app.rules.levels import DEFAULT_BOT_LEVEL, BotLevel
from app.rules.movelog import REMATCH_ENTRIES, entry_move
from app.rules.seats import SEATS, Seat
from app.services.live.followed import FollowedStream, PresenceCount
from app.services.live.presence import (
    PresenceMessage,
    PresenceService,
    SeatPresence,
    presence_channel,
)
from app.services.live.table_feeds import Feeds, Sink
from app.services.lobby.service import TableService, relation
from app.services.play.rematch import replayed_rematch
from app.services.social.model import Notice, NoticeKind, Viewer, player_channel
from app.services.social.service import SocialService
from app.services.tables.access import can_see, can_watch
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.ledger import LOBBY_CHANNEL, Ledger, game_channel
from app.services.tables.snapshot import (
    NO_AWAY,
    GameMessage,
    LobbyMessage,
    Occupant,
    TableSnapshot,
    TableStatus,
)
from app.store import table_rows as repo

SNAPSHOT = GameEvent.SNAPSHOT

LobbyChange = tuple[LobbyEvent, str, TableSnapshot | None]

# The changes after which a subscriber may have become, or stopped being, one of the
# table's players (so presence counts them, or no longer does).
_SEATING_EVENTS = frozenset(
    {
        SNAPSHOT,
        GameEvent.SEAT_TAKEN,
        GameEvent.SEAT_LEFT,
        GameEvent.PLAYER_KICKED,
        GameEvent.PLAYER_REPLACED,
        GameEvent.SEAT_RECLAIMED,
    }
)

# The replayed event of the mid-game log entries that change the table, not the game.
_TABLE_EVENTS = {
    "timeout": GameEvent.TURN_TIMED_OUT,
    "release": GameEvent.PLAYER_REPLACED,
    "close": GameEvent.TABLE_CLOSED,
}


async def _placed(
    count: PresenceCount, updates: AsyncGenerator[GameMessage, None]
) -> AsyncIterator[GameMessage]:
    """`updates`, placing the subscriber (presence) after each change that may seat or
    unseat them."""
    async with contextlib.aclosing(updates) as stream:
        async for message in stream:
            if message.event in _SEATING_EVENTS:
                await count.place(message.table)
            yield message


class Streams:
    """Subscriptions, each projected later for its own subscriber by the API layer."""

    def __init__(
        self,
        ledger: Ledger,
        broker: Broker[Any],
        tables: TableService,
        social: SocialService,
        presence: PresenceService | None = None,
    ) -> None:
        self.ledger = ledger
        self.broker = broker
        self.tables = tables
        self.social = social
        self.presence = presence
        self.feeds = Feeds(broker, self._check_visible, ledger.observe)

    def _check_visible(self, viewer: Viewer, table: TableSnapshot) -> None:
        self.check_viewer(viewer, self.tables.visible(viewer, table))

    def check_viewer(self, viewer: Viewer, table: TableSnapshot) -> None:
        """A seated player, or a spectator where spectating is on; else FORBIDDEN."""
        rel = relation(viewer, table)
        if not rel.seated and not can_watch(table, rel):
            raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")

    async def game_updates(
        self, viewer: Viewer, table_id: str, since: int | None, sink: Sink | None = None
    ) -> AsyncIterator[GameMessage]:
        """`_game_updates`, counting the subscriber as connected to the table (presence)
        from the moment the stream is set up to its end, while they are one of its
        players (`PresenceCount`). With a `sink`, its live phase follows the table's feed
        (the updates the sink writes are not yielded: app/services/live/table_feeds.py) and may park
        (app/services/live/followed.py): the stream then returns early, and `resume`
        takes it on when the sink is woken."""
        count = PresenceCount(self.presence, table_id, viewer.id)
        if sink is not None:
            stream = FollowedStream(self, viewer, table_id, sink, count)
            async for message in self._followed(stream, stream.start(since)):
                yield message
            return
        try:
            updates = self._game_updates(viewer, table_id, since, count.place)
            async for message in _placed(count, updates):
                yield message
        finally:
            count.leave()

    async def resume(self, stream: FollowedStream) -> AsyncIterator[GameMessage]:
        """The live phase of a parked followed stream, woken by its sink."""
        stream.parked = False
        async for message in self._followed(stream, stream.live()):
            yield message

    async def _followed(
        self, stream: FollowedStream, updates: AsyncGenerator[GameMessage, None]
    ) -> AsyncIterator[GameMessage]:
        try:
            async for message in _placed(stream.count, updates):
                yield message
        finally:
            if not stream.parked:
                stream.close()

    async def _game_updates(
        self,
        viewer: Viewer,
        table_id: str,
        since: int | None,
        ready: Callable[[TableSnapshot], Awaitable[None]],
    ) -> AsyncGenerator[GameMessage, None]:
        """Every change of the table's game in order, after a SNAPSHOT or the missed updates.

        The stream ends with FORBIDDEN if the subscriber loses the right to watch: the host
        turned spectating off or hid the table, or the subscriber's own access went away
        (a revoked link, an ended friendship, a block)."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self.check_viewer(viewer, table)
        # Subscribe before reading the current state: nothing published after it is lost.
        # The player's own channel says when their social graph (and so access) changes.
        channels = (game_channel(table_id), player_channel(viewer.id))
        with await self.broker.subscribe(*channels) as subscription:
            table = self.tables.visible(viewer, await self.ledger.get(table_id))
            await ready(table)
            missed = await self.missed(table, since) if since is not None else None
            if missed is None:
                yield GameMessage(SNAPSHOT, None, table)
                last = table.version
            else:
                last = since if since is not None else table.version
                for message in missed:
                    yield message
                    last = message.version
            if table.status is TableStatus.CLOSED:
                return  # TABLE_CLOSED was the last change: nothing more will come
            while True:
                message = await subscription.get()
                if isinstance(message, Notice):
                    if message.kind is NoticeKind.SOCIAL_CHANGED:
                        viewer = await self.social.viewer(viewer.player)
                        current = await self.ledger.get(table_id)
                        self.check_viewer(viewer, self.tables.visible(viewer, current))
                    continue
                if message is RESYNC or message.version > last + 1:
                    # Missed something (overflow, broker reconnect, out-of-order delivery
                    # between processes): catch up from the database.
                    subscription.drain()
                    viewer = await self.social.viewer(viewer.player)
                    async for caught_up in self.catch_up(viewer, table_id, last):
                        yield caught_up
                        last = caught_up.version
                        if caught_up.event is GameEvent.TABLE_CLOSED:
                            return
                    continue
                if message.version <= last:
                    continue
                self.ledger.observe(message.table)
                if message.event is GameEvent.TABLE_CLOSED:
                    yield message  # seen by every subscriber, whatever its access now
                    return
                self.check_viewer(viewer, self.tables.visible(viewer, message.table))
                yield message
                last = message.version

    async def catch_up(
        self, viewer: Viewer, table_id: str, last: int
    ) -> AsyncIterator[GameMessage]:
        """The updates after `last`, replayed from the move log, or else a SNAPSHOT."""
        current = await self.ledger.get(table_id)
        if current is None or current.version <= last:
            return
        self.check_viewer(viewer, self.tables.visible(viewer, current))
        missed = await self.missed(current, last)
        if missed is None:
            yield GameMessage(SNAPSHOT, None, current)
            return
        for message in missed:
            yield message

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

    async def seat_presence(self, viewer: Viewer, table_id: str) -> list[SeatPresence]:
        """The four seats' presence, for whoever may see the table's game."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self.check_viewer(viewer, table)
        assert self.presence is not None
        return await self.presence.seats(table)

    async def presence_updates(self, viewer: Viewer, table_id: str) -> AsyncIterator[SeatPresence]:
        """First the four seats' presence, then each change: a player connecting or
        disconnecting, or a seat changing hands. Ends when the table closes."""
        table, viewer = await self.tables.get_visible(viewer, table_id)
        self.check_viewer(viewer, table)
        assert self.presence is not None
        channels = (presence_channel(table_id), game_channel(table_id))
        with await self.broker.subscribe(*channels) as subscription:
            table = self.tables.visible(viewer, await self.ledger.get(table_id))
            shown = await self.presence.seats(table)
            for entry in shown:
                yield entry
            while True:
                message = await subscription.get()
                if isinstance(message, PresenceMessage):
                    seat = table.seat_of(message.player_id)
                    if seat is None or shown[seat].connected is message.connected:
                        continue
                    entry = SeatPresence(
                        seat, message.player_id, message.connected, message.changed_at
                    )
                elif message is RESYNC or isinstance(message, GameMessage):
                    if (
                        isinstance(message, GameMessage)
                        and message.table.occupants == table.occupants
                        and message.table.status is not TableStatus.CLOSED
                    ):
                        continue  # a move: nobody came or went
                    current = await self.ledger.get(table_id)
                    if current is None:
                        return
                    table = current
                    fresh = await self.presence.seats(table)
                    changed = [e for e, old in zip(fresh, shown, strict=True) if e != old]
                    for entry in changed:
                        if (entry.player_id, entry.connected) != (
                            shown[entry.seat].player_id,
                            shown[entry.seat].connected,
                        ):
                            yield entry
                        shown[entry.seat] = entry
                    if table.status is TableStatus.CLOSED:
                        return
                    continue
                else:
                    continue
                shown[entry.seat] = entry
                yield entry

    async def lobby_updates(self, viewer: Viewer) -> AsyncIterator[LobbyChange]:
        """Lobby changes of tables the subscriber may see: a table appears (TABLE_CREATED)
        when it is created or comes into sight, changes (TABLE_UPDATED), or disappears
        (TABLE_REMOVED) when it finishes, closes or goes out of sight — including when the
        subscriber's friendships, blocks, invitations or links change."""
        channels = (LOBBY_CHANNEL, player_channel(viewer.id))
        with await self.broker.subscribe(*channels) as subscription:
            visible = {t.id: t.version for t in await self.tables.lobby(viewer)}
            while True:
                message = await subscription.get()
                if message is RESYNC or isinstance(message, Notice):
                    # The social graph changed, or messages may have been missed: re-route
                    # every table from the database.
                    subscription.drain()
                    viewer = await self.social.viewer(viewer.player)
                    now = {t.id: t for t in await self.tables.lobby(viewer)}
                    for table_id in sorted(now.keys() - visible.keys()):
                        yield (LobbyEvent.TABLE_CREATED, table_id, now[table_id])
                    for table_id in sorted(visible.keys() - now.keys()):
                        yield (LobbyEvent.TABLE_REMOVED, table_id, None)
                    for table_id in sorted(now.keys() & visible.keys()):
                        if now[table_id].version != visible[table_id]:
                            yield (LobbyEvent.TABLE_UPDATED, table_id, now[table_id])
                    visible = {t.id: t.version for t in now.values()}
                    continue
                routed = _route(viewer, message, visible)
                if routed is not None:
                    yield routed

    async def notifications(self, viewer: Viewer) -> AsyncIterator[Notice]:
        """The subscriber's own notifications (internal notices left out)."""
        with await self.broker.subscribe(player_channel(viewer.id)) as subscription:
            while True:
                notice = await subscription.get()
                if isinstance(notice, Notice) and notice.kind is not NoticeKind.SOCIAL_CHANGED:
                    yield notice


def _route(viewer: Viewer, message: LobbyMessage, visible: dict[str, int]) -> LobbyChange | None:
    table = message.table
    now = table.status.open and can_see(table, relation(viewer, table))
    before = visible.get(table.id)
    if now:
        if before is not None and before >= table.version:
            return None  # already seen (a catch-up got there first)
        visible[table.id] = table.version
        event = LobbyEvent.TABLE_UPDATED if before is not None else LobbyEvent.TABLE_CREATED
        return (event, table.id, table)
    if before is not None:
        del visible[table.id]
        return (LobbyEvent.TABLE_REMOVED, table.id, None)
    return None


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
