"""Tables and seating: create, list, look up, sit, add bots, leave."""

from __future__ import annotations

import uuid

from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game
from app.rules.moves import EventKind, ReplacePlayer
from app.rules.seats import SEATS, Seat

from .access import Relation, can_see, can_sit, clean_name, resolve_join_policy
from .auth import Player
from .ledger import Change, Ledger
from .model import JoinPolicy, Occupant, TableSnapshot, TableStatus, Visibility, now_ts


def _start_entry(game: Game) -> dict[str, object]:
    return {
        "type": "start",
        "seed": str(game.seed),
        "public": game.seed_public,
        "players": list(game.players),
    }


class TableService:
    """Table lifecycle and the access checks that guard it."""

    def __init__(self, ledger: Ledger, allow_seeded_tables: bool = False) -> None:
        self.ledger = ledger
        self.allow_seeded_tables = allow_seeded_tables

    # ------------------------------------------------------------------ access

    def relation(self, player: Player, table: TableSnapshot) -> Relation:
        """How `player` stands to `table` (friends and links come with the social layer)."""
        return Relation(
            is_host=table.host_id == player.id,
            seated=table.seat_of(player.id) is not None,
        )

    def visible(self, player: Player, table: TableSnapshot | None) -> TableSnapshot:
        """The table if `player` may see it; NOT_FOUND otherwise (existence not revealed)."""
        if table is None or not can_see(table, self.relation(player, table)):
            raise RuleError(ErrorCode.NOT_FOUND, "no such table")
        return table

    async def get_visible(self, player: Player, table_id: str) -> TableSnapshot:
        """Look a table up for `player`, NOT_FOUND when unknown or not visible."""
        if not _plausible_id(table_id):
            raise RuleError(ErrorCode.NOT_FOUND, "no such table")
        return self.visible(player, await self.ledger.get(table_id))

    async def lobby(self, player: Player) -> list[TableSnapshot]:
        """Open tables `player` may see, oldest first."""
        tables = await self.ledger.open_tables()
        return [t for t in tables if can_see(t, self.relation(player, t))]

    # ------------------------------------------------------------------ commands

    async def create(
        self,
        host: Player,
        name: str | None,
        visibility: Visibility,
        join_policy: JoinPolicy | None,
        spectating: bool,
        seed: int | None = None,
    ) -> TableSnapshot:
        """A new table; the creator is host and sits NORTH."""
        if seed is not None and not self.allow_seeded_tables:
            raise RuleError(ErrorCode.FORBIDDEN, "seeded tables are not enabled on this server")
        table = TableSnapshot(
            id=uuid.uuid4().hex,
            name=clean_name(name),
            host_id=host.id,
            host_name=host.username,
            visibility=visibility,
            join_policy=resolve_join_policy(visibility, join_policy),
            spectating=spectating,
            status=TableStatus.WAITING,
            version=0,
            occupants=(Occupant(host.id, host.username), None, None, None),
            game=None,
            created_at=now_ts(),
            deal_seed=seed,
        )
        await self.ledger.create(table)
        return table

    async def join(self, player: Player, table_id: str, seat: Seat) -> TableSnapshot:
        """Sit `player` at `seat`; the fourth seat filled starts the game."""
        await self.get_visible(player, table_id)

        def decide(table: TableSnapshot) -> Change:
            self.visible(player, table)
            if not can_sit(table, self.relation(player, table)):
                raise RuleError(
                    ErrorCode.FORBIDDEN, "this table's join policy does not let you sit"
                )
            if table.seat_of(player.id) is not None:
                raise RuleError(ErrorCode.ALREADY_SEATED, "you already sit at this table")
            _require_waiting(table)
            return _sit(table, seat, Occupant(player.id, player.username))

        _, after = await self.ledger.change(table_id, decide)
        return after

    async def add_bot(self, player: Player, table_id: str, seat: Seat) -> TableSnapshot:
        """Host only, before the game starts: a bot takes an empty seat."""
        await self.get_visible(player, table_id)

        def decide(table: TableSnapshot) -> Change:
            self.visible(player, table)
            if table.host_id != player.id:
                raise RuleError(ErrorCode.FORBIDDEN, "only the host can add bots")
            _require_waiting(table)
            return _sit(table, seat, Occupant.bot(seat))

        _, after = await self.ledger.change(table_id, decide)
        return after

    async def leave(self, player: Player, table_id: str) -> TableSnapshot:
        """Leave a table. Mid-game a bot takes the seat at once."""
        await self.get_visible(player, table_id)

        def decide(table: TableSnapshot) -> Change:
            self.visible(player, table)
            seat = table.seat_of(player.id)
            if seat is None:
                raise RuleError(ErrorCode.FORBIDDEN, "you do not sit at this table")
            if table.status is TableStatus.WAITING:
                return _leave_waiting(table, seat)
            if table.status is TableStatus.PLAYING:
                return _leave_playing(table, seat)
            raise RuleError(ErrorCode.WRONG_PHASE, "the game is over")

        _, after = await self.ledger.change(table_id, decide)
        return after


def _plausible_id(table_id: str) -> bool:
    return isinstance(table_id, str) and 0 < len(table_id) <= 64 and table_id.isalnum()


def _require_waiting(table: TableSnapshot) -> None:
    if table.status is TableStatus.PLAYING or table.full:
        raise RuleError(ErrorCode.TABLE_FULL, "the table is full")
    if table.status is not TableStatus.WAITING:
        raise RuleError(ErrorCode.WRONG_PHASE, "the table is closed")


def _sit(table: TableSnapshot, seat: Seat, occupant: Occupant) -> Change:
    if table.occupants[seat] is not None:
        raise RuleError(ErrorCode.SEAT_TAKEN, f"{seat.name} is taken")
    occupants = list(table.occupants)
    occupants[seat] = occupant
    change = Change(lobby_event="TABLE_UPDATED")
    seated = table.evolve(occupants=tuple(occupants), version=table.version + 1)
    change.add("SEAT_TAKEN", seated, seat)
    change.log_entry(
        seated.version, 1, {"type": "sit", "seat": seat.name, "player": occupant.player_id}
    )
    if seated.full:
        players = [o.player_id for o in seated.occupants if o is not None]
        game, _event = Game.start(players, seed=table.deal_seed)
        started = seated.evolve(game=game, status=TableStatus.PLAYING, version=seated.version + 1)
        change.add(EventKind.GAME_STARTED.value, started, game.hand.dealer)
        change.log_entry(started.version, 1, _start_entry(game))
    return change


def _next_host(table: TableSnapshot, leaving: Seat) -> str | None:
    for seat in SEATS:
        occupant = table.occupants[seat]
        if seat is not leaving and occupant is not None and not occupant.is_bot:
            return occupant.player_id
    return None


def _leave_waiting(table: TableSnapshot, seat: Seat) -> Change:
    occupants = list(table.occupants)
    occupants[seat] = None
    host_id = table.host_id
    status = table.status
    leaving = table.occupants[seat]
    if leaving is not None and host_id == leaving.player_id:
        new_host = _next_host(table, seat)
        if new_host is None:
            status = TableStatus.CLOSED  # the last human left: nobody to host it
        else:
            host_id = new_host
    host_name = next(
        (o.username or "?" for o in occupants if o is not None and o.player_id == host_id),
        table.host_name,
    )
    left = table.evolve(
        occupants=tuple(occupants),
        version=table.version + 1,
        host_id=host_id,
        host_name=host_name,
        status=status,
    )
    change = Change(
        lobby_event="TABLE_REMOVED" if status is TableStatus.CLOSED else "TABLE_UPDATED"
    )
    change.add("SEAT_LEFT", left, seat)
    change.log_entry(left.version, 1, {"type": "leave", "seat": seat.name})
    return change


def _leave_playing(table: TableSnapshot, seat: Seat) -> Change:
    assert table.game is not None
    game = table.game.copy()
    move = ReplacePlayer(seat, seat.bot_id)
    steps = game.apply_steps(move)
    occupants = list(table.occupants)
    leaving = occupants[seat]
    occupants[seat] = Occupant.bot(seat)
    host_id, host_name = table.host_id, table.host_name
    if leaving is not None and leaving.player_id == host_id:
        new_host = _next_host(table, seat)
        if new_host is not None:
            host_id = new_host
            host_name = next(o.username or "?" for o in occupants if o and o.player_id == new_host)
    humans_left = any(o is not None and not o.is_bot for o in occupants)
    status = TableStatus.PLAYING if humans_left else TableStatus.CLOSED
    replaced = table.evolve(
        occupants=tuple(occupants),
        game=steps[-1].state,
        version=table.version + 1,
        host_id=host_id,
        host_name=host_name,
        status=status,
    )
    change = Change(
        lobby_event="TABLE_REMOVED" if status is TableStatus.CLOSED else "TABLE_UPDATED"
    )
    change.add(EventKind.PLAYER_REPLACED.value, replaced, seat)
    from .codec import move_entry

    change.log_entry(replaced.version, 1, move_entry(move))
    return change
