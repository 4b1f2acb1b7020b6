"""The Table type and the view of a game for a viewer."""

from __future__ import annotations

import strawberry

from app.api.graphql.enums import TableStatus
from app.api.graphql.game_view import game_view, seat_states
from app.api.graphql.types import BotLevel, GameView, JoinPolicy, Player, SeatState, Visibility
from app.services.lobby.service import relation
from app.services.social.model import Viewer
from app.services.tables.access import can_watch
from app.services.tables.snapshot import GameMessage, TableSnapshot


def viewer_game(table: TableSnapshot, viewer: Viewer | None) -> GameView:
    """The game view of `table` for `viewer`: its seat's view, or a spectator's (without
    trick details for someone who may not watch)."""
    seat = table.seat_of(viewer.id) if viewer is not None else None
    if seat is not None:
        return game_view(table, seat)
    watching = viewer is not None and can_watch(table, relation(viewer, table))
    return game_view(table, None, watching)


def message_view(message: GameMessage, viewer: Viewer) -> GameView:
    """The view of one broker message for one subscriber, built once per viewer seat."""
    seat = message.table.seat_of(viewer.id)
    view = message.views.get(seat)
    if view is None:
        # A non-seated subscriber is a spectator allowed to watch (the stream checks it).
        view = game_view(message.table, seat)
        message.views[seat] = view
    assert isinstance(view, GameView)
    return view


@strawberry.type
class Table:
    snapshot: strawberry.Private[TableSnapshot]
    viewer: strawberry.Private[Viewer | None]
    id: strawberry.ID
    name: str | None
    host: Player
    visibility: Visibility
    join_policy: JoinPolicy
    spectating: bool
    seats: list[SeatState]
    rematch_of: strawberry.ID | None = strawberry.field(
        default=None, description="the table this one is the rematch of"
    )

    @strawberry.field(description="the game as seen by the caller")
    def game(self) -> GameView:
        return viewer_game(self.snapshot, self.viewer)

    @strawberry.field(description="seats still free while the table waits for players")
    def open_seats(self) -> int:
        return sum(1 for o in self.snapshot.occupants if o is None)

    @strawberry.field(description="rated: four humans at the start; its end changes ratings")
    def rated(self) -> bool:
        return self.snapshot.rated

    @strawberry.field(description="WAITING, PLAYING, FINISHED or CLOSED")
    def status(self) -> TableStatus:
        return self.snapshot.status

    @strawberry.field(description="seconds a human has for each turn; 0: untimed")
    def turn_seconds(self) -> int:
        return self.snapshot.turn_seconds

    @strawberry.field(description="the level of a bot that takes an absent or leaving human's seat")
    def replacement_bot(self) -> BotLevel:
        return BotLevel(self.snapshot.replacement_bot.value)

    @classmethod
    def of(cls, table: TableSnapshot, viewer: Viewer | None) -> Table:
        """The GraphQL table of a snapshot, as `viewer` sees it."""
        return cls(
            snapshot=table,
            viewer=viewer,
            id=strawberry.ID(table.id),
            name=table.name,
            host=Player(id=strawberry.ID(table.host_id), username=table.host_name),
            visibility=Visibility[table.visibility.value],
            join_policy=JoinPolicy[table.join_policy.value],
            spectating=table.spectating,
            seats=seat_states(table),
            rematch_of=strawberry.ID(table.rematch_of) if table.rematch_of else None,
        )
