"""Tables and seating: create, list, look up, sit, add bots, leave, and host powers."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game
from app.rules.levels import DEFAULT_BOT_LEVEL, BotLevel
from app.rules.movelog import move_entry
from app.rules.moves import ReplacePlayer
from app.rules.seats import SEATS, Seat
from app.services.social.model import LinkKind, Notice, NoticeKind, Viewer
from app.services.social.service import SocialService
from app.services.tables.access import (
    ALLOWED_POLICIES,
    Relation,
    can_see,
    can_sit,
    can_watch,
    clean_name,
    policy_after_visibility_change,
    resolve_join_policy,
)
from app.services.tables.change import Change
from app.services.tables.events import GameEvent, LobbyEvent
from app.services.tables.ledger import Ledger
from app.services.tables.snapshot import (
    DEFAULT_TURN_SECONDS,
    MAX_TURN_SECONDS,
    MIN_TURN_SECONDS,
    JoinPolicy,
    Occupant,
    TableSnapshot,
    TableStatus,
    Visibility,
    now_ts,
)


@dataclass(frozen=True, slots=True)
class TableOptions:
    """The options a host may change before the game starts; None leaves one as it is."""

    name: str | None = None
    clear_name: bool = False
    visibility: Visibility | None = None
    join_policy: JoinPolicy | None = None
    spectating: bool | None = None
    turn_seconds: int | None = None
    replacement_bot: BotLevel | None = None


@dataclass(frozen=True, slots=True)
class LobbyFilter:
    """Optional lobby filters."""

    open_seats_only: bool = False
    name_contains: str | None = None

    def accepts(self, table: TableSnapshot) -> bool:
        """Whether `table` passes the filter."""
        if self.open_seats_only and (table.full or table.status is not TableStatus.WAITING):
            return False
        if self.name_contains:
            return self.name_contains.casefold() in (table.name or "").casefold()
        return True


def relation(viewer: Viewer, table: TableSnapshot) -> Relation:
    """How the viewer stands to the table."""
    return Relation(
        is_host=table.host_id == viewer.id,
        # An away player still belongs to the table: they may see it, watch, reclaim.
        seated=table.seat_of(viewer.id) is not None or table.away_seat(viewer.id) is not None,
        friend_of_host=table.host_id in viewer.friends,
        invited=table.id in viewer.invited and table.status is TableStatus.WAITING,
        join_link=table.id in viewer.join_links,
        spectator_link=table.id in viewer.spectator_links,
        blocked=table.host_id in viewer.blocks,
    )


def start_entry(game: Game) -> dict[str, object]:
    """The move-log entry of a game's start (its seed and players)."""
    return {
        "type": "start",
        "seed": str(game.seed),
        "public": game.seed_public,
        "players": list(game.players),
    }


class TableService:
    """Table lifecycle and the access checks that guard it."""

    def __init__(
        self, ledger: Ledger, social: SocialService, allow_seeded_tables: bool = False
    ) -> None:
        self.ledger = ledger
        self.social = social
        self.allow_seeded_tables = allow_seeded_tables

    # ------------------------------------------------------------------ access

    def visible(self, viewer: Viewer, table: TableSnapshot | None) -> TableSnapshot:
        """The table if the viewer may see it; NOT_FOUND otherwise (existence not revealed)."""
        if table is None or not can_see(table, relation(viewer, table)):
            raise RuleError(ErrorCode.NOT_FOUND, "no such table")
        return table

    async def get_visible(
        self, viewer: Viewer, table_id: str, code: str | None = None
    ) -> tuple[TableSnapshot, Viewer]:
        """Look a table up, NOT_FOUND when unknown or not visible. A link `code` is
        redeemed first; the returned viewer reflects it."""
        if not plausible_id(table_id):
            raise RuleError(ErrorCode.NOT_FOUND, "no such table")
        table = await self.ledger.get(table_id)
        if table is not None and code:
            kind = await self.social.redeem(viewer.player, table_id, code)
            if kind is not None:
                viewer = await self.social.viewer(viewer.player)
        return self.visible(viewer, table), viewer

    async def lobby(self, viewer: Viewer, filter: LobbyFilter | None = None) -> list[TableSnapshot]:
        """Open tables the viewer may see, oldest first."""
        tables = await self.ledger.open_tables()
        wanted = filter or LobbyFilter()
        return [t for t in tables if can_see(t, relation(viewer, t)) and wanted.accepts(t)]

    # ------------------------------------------------------------------ commands

    async def create(
        self,
        host: Viewer,
        name: str | None,
        visibility: Visibility,
        join_policy: JoinPolicy | None,
        spectating: bool,
        seed: int | None = None,
        turn_seconds: int = DEFAULT_TURN_SECONDS,
        replacement_bot: BotLevel = DEFAULT_BOT_LEVEL,
        rated: bool = False,
    ) -> TableSnapshot:
        """A new table; the creator is host and sits NORTH. A rated table takes no bots
        before its game starts."""
        if seed is not None and not self.allow_seeded_tables:
            raise RuleError(ErrorCode.FORBIDDEN, "seeded tables are not enabled on this server")
        check_turn_seconds(turn_seconds, visibility)
        player = host.player
        table = TableSnapshot(
            id=uuid.uuid4().hex,
            name=clean_name(name),
            host_id=player.id,
            host_name=player.username,
            visibility=visibility,
            join_policy=resolve_join_policy(visibility, join_policy),
            spectating=spectating,
            status=TableStatus.WAITING,
            version=0,
            occupants=(Occupant(player.id, player.username), None, None, None),
            game=None,
            created_at=now_ts(),
            deal_seed=seed,
            turn_seconds=turn_seconds,
            replacement_bot=replacement_bot,
            rated=rated,
        )
        await self.ledger.create(table)
        return table

    async def join(
        self, viewer: Viewer, table_id: str, seat: Seat, code: str | None = None
    ) -> TableSnapshot:
        """Sit at `seat`; the fourth seat filled starts the game. A join link's code or an
        invitation lets the player sit whatever the join policy."""
        _, viewer = await self.get_visible(viewer, table_id, code)
        player = viewer.player

        def decide(table: TableSnapshot) -> Change:
            self.visible(viewer, table)
            # A seated player is told so, whatever the join policy would say to them now.
            if table.seat_of(player.id) is not None:
                raise RuleError(ErrorCode.ALREADY_SEATED, "you already sit at this table")
            if not can_sit(table, relation(viewer, table)):
                raise RuleError(
                    ErrorCode.FORBIDDEN, "this table's join policy does not let you sit"
                )
            _require_waiting(table)
            change = _sit(table, seat, Occupant(player.id, player.username))
            change.effects.append(
                lambda session: self.social.drop_invitation(session, table_id, player.id)
            )
            return change

        _, after = await self.ledger.change(table_id, decide)
        if table_id in viewer.invited:
            # The invitation is used up: the player's live lobby must stop counting on it.
            await self.social.notify_social_change([player.id])
        return after

    async def watch(self, viewer: Viewer, table_id: str, code: str | None = None) -> TableSnapshot:
        """Become a spectator: the table must allow spectating and be visible to the caller
        (a spectator link's code makes it visible)."""
        table, viewer = await self.get_visible(viewer, table_id, code)
        if table.seat_of(viewer.id) is not None:
            raise RuleError(ErrorCode.ALREADY_SEATED, "you sit at this table: you play, not watch")
        if not can_watch(table, relation(viewer, table)):
            raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")
        await self.social.remember_spectator(table.id, viewer.id)
        return table

    async def add_bot(
        self, viewer: Viewer, table_id: str, seat: Seat, level: BotLevel = DEFAULT_BOT_LEVEL
    ) -> TableSnapshot:
        """Host only, before the game starts: a bot of `level` takes an empty seat."""
        await self.get_visible(viewer, table_id)

        def decide(table: TableSnapshot) -> Change:
            self._require_host(viewer, table, "add bots")
            _require_waiting(table)
            if table.rated:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "a rated table is for four humans")
            return _sit(table, seat, Occupant.bot(seat, level))

        _, after = await self.ledger.change(table_id, decide)
        return after

    async def leave(self, viewer: Viewer, table_id: str) -> TableSnapshot:
        """Leave a table. Mid-game a bot takes the seat at once; an away player leaving
        gives up their claim (the bot keeps the seat, and they cannot reclaim it)."""
        await self.get_visible(viewer, table_id)

        def decide(table: TableSnapshot) -> Change:
            self.visible(viewer, table)
            seat = table.seat_of(viewer.id)
            if seat is None:
                return _leave_away_seat(table, viewer.id)
            if table.status is TableStatus.WAITING:
                return _free_seat(table, seat, GameEvent.SEAT_LEFT)
            if table.status is TableStatus.PLAYING:
                return _leave_playing(table, seat)
            raise RuleError(ErrorCode.WRONG_PHASE, "the game is over")

        _, after = await self.ledger.change(table_id, decide)
        return after

    async def reclaim(self, viewer: Viewer, table_id: str) -> TableSnapshot:
        """The away player of a seat takes it back from the bot standing in (until the
        game is over); if it is the seat's turn, a fresh clock starts."""
        await self.get_visible(viewer, table_id)

        def decide(table: TableSnapshot) -> Change:
            self.visible(viewer, table)
            seat = table.away_seat(viewer.id)
            if seat is None:
                raise RuleError(ErrorCode.FORBIDDEN, "no seat here is held for you")
            if table.status is not TableStatus.PLAYING or table.game is None:
                raise RuleError(ErrorCode.WRONG_PHASE, "the game is over")
            return _reclaim(table, seat)

        _, after = await self.ledger.change(table_id, decide)
        return after

    # ------------------------------------------------------------------ host powers

    def _require_host(self, viewer: Viewer, table: TableSnapshot, action: str) -> None:
        self.visible(viewer, table)
        if table.host_id != viewer.id:
            raise RuleError(ErrorCode.FORBIDDEN, f"only the host can {action}")

    async def host_table(self, viewer: Viewer, table_id: str, action: str) -> TableSnapshot:
        """The table, if the viewer sees it and is its host (FORBIDDEN otherwise)."""
        table, _ = await self.get_visible(viewer, table_id)
        self._require_host(viewer, table, action)
        return table

    async def update(self, viewer: Viewer, table_id: str, options: TableOptions) -> TableSnapshot:
        """Host only, before the game starts: change name, visibility, join policy,
        spectating."""
        await self.get_visible(viewer, table_id)

        def decide(table: TableSnapshot) -> Change:
            self._require_host(viewer, table, "change the table")
            _require_not_started(table)
            changed = _apply_options(table, options).evolve(version=table.version + 1)
            change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
            change.add(GameEvent.TABLE_UPDATED, changed)
            change.log_entry(changed.version, 1, {"type": "options"})
            return change

        _, after = await self.ledger.change(table_id, decide)
        return after

    async def transfer_host(self, viewer: Viewer, table_id: str, player_id: str) -> TableSnapshot:
        """Host only, before the game starts: make a seated human the host."""
        await self.get_visible(viewer, table_id)

        def decide(table: TableSnapshot) -> Change:
            self._require_host(viewer, table, "transfer host")
            _require_not_started(table)
            seat = table.seat_of(player_id)
            occupant = table.occupants[seat] if seat is not None else None
            if occupant is None or occupant.is_bot:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "the new host must be a seated human")
            moved = table.evolve(
                host_id=occupant.player_id,
                host_name=occupant.username or "?",
                version=table.version + 1,
            )
            change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
            change.add(GameEvent.HOST_CHANGED, moved, seat)
            change.log_entry(moved.version, 1, {"type": "host", "player": occupant.player_id})
            return change

        _, after = await self.ledger.change(table_id, decide)
        return after

    async def kick(self, viewer: Viewer, table_id: str, player_id: str) -> TableSnapshot:
        """Host only, before the game starts: free a seat; the kicked player loses any
        invitation to this table."""
        await self.get_visible(viewer, table_id)

        def decide(table: TableSnapshot) -> Change:
            self._require_host(viewer, table, "kick players")
            _require_not_started(table)
            seat = table.seat_of(player_id)
            if seat is None:
                raise RuleError(ErrorCode.BAD_USER_INPUT, "that player does not sit here")
            if player_id == viewer.id:
                raise RuleError(
                    ErrorCode.BAD_USER_INPUT, "leave the table instead of kicking yourself"
                )
            change = _free_seat(table, seat, GameEvent.PLAYER_KICKED)
            change.effects.append(
                lambda session: self.social.drop_invitation(session, table_id, player_id)
            )
            return change

        _, after = await self.ledger.change(table_id, decide)
        if not player_id.startswith("bot:"):
            await self.social.notify(
                player_id, Notice(NoticeKind.KICKED, table_id=table_id, other=viewer.player)
            )
            await self.social.notify_social_change([player_id])
        return after

    async def create_link(self, viewer: Viewer, table_id: str, kind: LinkKind) -> str:
        """Host only: a new join or spectator link code (the previous one stops working)."""
        table = await self.host_table(viewer, table_id, "create links")
        if table.status is not TableStatus.WAITING and kind is LinkKind.JOIN:
            raise RuleError(ErrorCode.WRONG_PHASE, "the game has started: nobody can join")
        if not table.status.open:
            raise RuleError(ErrorCode.WRONG_PHASE, "the table is closed")
        return await self.social.create_link(table_id, kind)


def plausible_id(table_id: object) -> bool:
    """Ids are short alphanumeric strings; anything else cannot name a table."""
    return isinstance(table_id, str) and 0 < len(table_id) <= 64 and table_id.isalnum()


def _require_waiting(table: TableSnapshot) -> None:
    if table.status is TableStatus.PLAYING or table.full:
        raise RuleError(ErrorCode.TABLE_FULL, "the table is full")
    if table.status is not TableStatus.WAITING:
        raise RuleError(ErrorCode.WRONG_PHASE, "the table is closed")


def _require_not_started(table: TableSnapshot) -> None:
    if table.status is not TableStatus.WAITING:
        raise RuleError(ErrorCode.WRONG_PHASE, "only before the game starts")


def _apply_options(table: TableSnapshot, options: TableOptions) -> TableSnapshot:
    visibility = options.visibility or table.visibility
    if options.join_policy is not None:
        if options.join_policy not in ALLOWED_POLICIES[visibility]:
            raise RuleError(
                ErrorCode.BAD_USER_INPUT,
                f"join policy {options.join_policy.value} is more open than visibility "
                f"{visibility.value} allows",
            )
        policy = options.join_policy
    else:
        policy = policy_after_visibility_change(visibility, table.join_policy)
    name = table.name
    if options.clear_name:
        name = None
    elif options.name is not None:
        name = clean_name(options.name)
    spectating = table.spectating if options.spectating is None else options.spectating
    seconds = table.turn_seconds if options.turn_seconds is None else options.turn_seconds
    check_turn_seconds(seconds, visibility)
    return table.evolve(
        name=name,
        visibility=visibility,
        join_policy=policy,
        spectating=spectating,
        turn_seconds=seconds,
        replacement_bot=options.replacement_bot or table.replacement_bot,
    )


def check_turn_seconds(seconds: int, visibility: Visibility) -> None:
    """docs/rules.md: 5..300 seconds per turn, or 0 (untimed) on FRIENDS_ONLY and PRIVATE
    tables; BAD_USER_INPUT otherwise."""
    if seconds == 0:
        if visibility is Visibility.PUBLIC:
            raise RuleError(
                ErrorCode.BAD_USER_INPUT, "a PUBLIC table needs a turn clock (turnSeconds 5..300)"
            )
        return
    if not MIN_TURN_SECONDS <= seconds <= MAX_TURN_SECONDS:
        raise RuleError(
            ErrorCode.BAD_USER_INPUT,
            f"turnSeconds must be {MIN_TURN_SECONDS}..{MAX_TURN_SECONDS}, or 0 for untimed",
        )


def _sit(table: TableSnapshot, seat: Seat, occupant: Occupant) -> Change:
    if table.occupants[seat] is not None:
        raise RuleError(ErrorCode.SEAT_TAKEN, f"{seat.name} is taken")
    occupants = list(table.occupants)
    occupants[seat] = occupant
    change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
    seated = table.evolve(occupants=tuple(occupants), version=table.version + 1)
    change.add(GameEvent.SEAT_TAKEN, seated, seat)
    change.log_entry(
        seated.version, 1, {"type": "sit", "seat": seat.name, "player": occupant.player_id}
    )
    if seated.full:
        players = [o.player_id for o in seated.occupants if o is not None]
        game, _event = Game.start(players, seed=table.deal_seed)
        started = seated.evolve(game=game, status=TableStatus.PLAYING, version=seated.version + 1)
        change.add(GameEvent.GAME_STARTED, started, game.hand.dealer)
        change.log_entry(started.version, 1, start_entry(game))
    return change


def _next_host(table: TableSnapshot, leaving: Seat) -> Occupant | None:
    for seat in SEATS:
        occupant = table.occupants[seat]
        if seat is not leaving and occupant is not None and not occupant.is_bot:
            return occupant
    return None


def _host_after_leaving(table: TableSnapshot, seat: Seat) -> tuple[str, str] | None:
    """The host after `seat` leaves: unchanged, passed to another seated human, or None
    when no human is left to host."""
    leaving = table.occupants[seat]
    if leaving is None or leaving.player_id != table.host_id:
        return table.host_id, table.host_name
    heir = _next_host(table, seat)
    return (heir.player_id, heir.username or "?") if heir is not None else None


def _free_seat(table: TableSnapshot, seat: Seat, event: GameEvent) -> Change:
    occupants = list(table.occupants)
    occupants[seat] = None
    host = _host_after_leaving(table, seat)
    humans_left = any(o is not None and not o.is_bot for o in occupants)
    host_id, host_name = host if host is not None else (table.host_id, table.host_name)
    left = table.evolve(
        occupants=tuple(occupants),
        version=table.version + 1,
        host_id=host_id,
        host_name=host_name,
    )
    change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
    change.add(event, left, seat)
    change.log_entry(left.version, 1, {"type": "leave", "seat": seat.name})
    if host is None or not humans_left:
        close_table(left, change)
    return change


def _leave_playing(table: TableSnapshot, seat: Seat) -> Change:
    """A bot takes the seat of a player who left (who, unlike an away player, cannot
    come back); without any human left to come back, the table then closes."""
    assert table.game is not None
    game = table.game.copy()
    move = ReplacePlayer(seat, seat.bot_id)
    steps = game.apply_steps(move)
    occupants = list(table.occupants)
    occupants[seat] = Occupant.bot(seat, table.replacement_bot)
    host = _host_after_leaving(table, seat)
    host_id, host_name = host if host is not None else (table.host_id, table.host_name)
    timeouts = list(table.timeouts)
    timeouts[seat] = 0
    replaced = table.evolve(
        occupants=tuple(occupants),
        game=steps[-1].state,
        version=table.version + 1,
        host_id=host_id,
        host_name=host_name,
        timeouts=tuple(timeouts),
        timed_out=None,
    )
    change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
    change.add(GameEvent.PLAYER_REPLACED, replaced, seat)
    change.log_entry(replaced.version, 1, move_entry(move))
    _close_if_abandoned(replaced, change)
    return change


def _close_if_abandoned(table: TableSnapshot, change: Change) -> None:
    """With no human seated and none away who could come back, the game is abandoned
    rather than run by bots alone: the table closes (one more step of `change`)."""
    humans = any(o is not None and not o.is_bot for o in table.occupants)
    if not humans and all(a is None for a in table.away):
        close_table(table, change)


def _leave_away_seat(table: TableSnapshot, player_id: str) -> Change:
    """`leaveTable` by someone not seated: an away player gives up their claim while the
    game is in progress; anyone else does not sit here."""
    away = table.away_seat(player_id)
    if away is None:
        raise RuleError(ErrorCode.FORBIDDEN, "you do not sit at this table")
    if table.status is not TableStatus.PLAYING:
        raise RuleError(ErrorCode.WRONG_PHASE, "the game is over")
    return _give_up_claim(table, away)


def _give_up_claim(table: TableSnapshot, seat: Seat) -> Change:
    """The away player of `seat` leaves: the bot standing in keeps the seat for good
    (PLAYER_REPLACED, as after leaving while seated); the host passes on if it was them;
    without any human left to come back, the table then closes."""
    away = table.away[seat]
    assert away is not None
    still_away = list(table.away)
    still_away[seat] = None
    host_id, host_name = table.host_id, table.host_name
    if host_id == away.player_id and (heir := _next_host(table, seat)) is not None:
        host_id, host_name = heir.player_id, heir.username or "?"
    released = table.evolve(
        away=tuple(still_away), version=table.version + 1, host_id=host_id, host_name=host_name
    )
    change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
    change.add(GameEvent.PLAYER_REPLACED, released, seat)
    change.log_entry(released.version, 1, {"type": "release", "seat": seat.name})
    _close_if_abandoned(released, change)
    return change


def _reclaim(table: TableSnapshot, seat: Seat) -> Change:
    away = table.away[seat]
    assert table.game is not None and away is not None
    game = table.game.copy()
    move = ReplacePlayer(seat, away.player_id)
    steps = game.apply_steps(move)
    occupants = list(table.occupants)
    occupants[seat] = away
    still_away = list(table.away)
    still_away[seat] = None
    timeouts = list(table.timeouts)
    timeouts[seat] = 0
    back = table.evolve(
        occupants=tuple(occupants),
        away=tuple(still_away),
        timeouts=tuple(timeouts),
        game=steps[-1].state,
        version=table.version + 1,
    )
    change = Change(lobby_event=LobbyEvent.TABLE_UPDATED)
    change.add(GameEvent.SEAT_RECLAIMED, back, seat)
    change.log_entry(
        back.version, 1, {"type": "reclaim", "seat": seat.name, "player": away.player_id}
    )
    return change


def close_table(table: TableSnapshot, change: Change, reason: str | None = None) -> TableSnapshot:
    """Close `table`: TABLE_CLOSED, its last change (one more step of `change`); the
    table leaves the lobby, its streams end and every move is refused. An operator's
    `reason` is kept in the move log."""
    closed = table.evolve(
        version=table.version + 1, status=TableStatus.CLOSED, turn_deadline=None, timed_out=None
    )
    change.add(GameEvent.TABLE_CLOSED, closed)
    entry: dict[str, object] = {"type": "close"}
    if reason is not None:
        entry["reason"] = reason
    change.log_entry(closed.version, 1, entry)
    change.lobby_event = LobbyEvent.TABLE_REMOVED
    return closed
