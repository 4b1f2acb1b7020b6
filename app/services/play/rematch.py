"""Rematch (docs/rules.md, Rematch): after GAME_OVER every seated human asks, bots agree, and a
new table opens with the same options, occupants and seats, its game started at once.

Each request is a versioned change of the old table (`REMATCH_REQUESTED`); the request
that completes the set also makes the old table's last change (`REMATCH_STARTED`, naming
the new table) and, in the same transaction, creates the new table. The new table's id is
derived from the old one, and the old table's compare-and-swap lets only one of two
racing last requests commit, so there is exactly one rematch table, on any number of
processes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from app.rules.dealing import rematch_seed
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game
from app.rules.movelog import LogEntry
from app.rules.seats import SEATS, Seat
from app.services.accounts.auth import Player
from app.services.lobby.service import TableService, relation, start_entry
from app.services.social.model import Viewer
from app.services.social.service import SocialService, load_viewer
from app.services.tables.access import can_watch
from app.services.tables.change import Change
from app.services.tables.deadlines import clocked
from app.services.tables.events import GameEvent
from app.services.tables.ledger import Ledger, insert_table
from app.services.tables.snapshot import (
    NO_AWAY,
    NO_TIMEOUTS,
    GameMessage,
    TableSnapshot,
    TableStatus,
    Visibility,
    now_ts,
)
from app.store import table_rows as repo
from app.store.models import LinkGrantRow, TableLinkRow
from app.store.spectators import keep_spectators, spectators_of

REMATCH_REQUESTED = GameEvent.REMATCH_REQUESTED
REMATCH_STARTED = GameEvent.REMATCH_STARTED
REMATCH_WINDOW_SECONDS = 300


def rematch_table_id(table_id: str) -> str:
    """The id of a table's rematch table: derived from the old id, so that however the
    requests race there can be only one."""
    return hashlib.sha256(f"rematch:{table_id}".encode()).hexdigest()[:32]


def human_seats(table: TableSnapshot) -> list[Seat]:
    """The seats held by humans, NORTH first."""
    return [s for s in SEATS if (o := table.occupants[s]) is not None and not o.is_bot]


def rematch_of(table: TableSnapshot, now: float) -> TableSnapshot:
    """The rematch table of a finished table: same options, occupants and seats; the same
    host if they sit there, else the first seated human clockwise from NORTH; its game
    started (version 1)."""
    host_id, host_name = table.host_id, table.host_name
    if table.seat_of(host_id) is None:
        first = table.occupants[human_seats(table)[0]]
        assert first is not None
        host_id, host_name = first.player_id, first.username or "?"
    players = [o.player_id for o in table.occupants if o is not None]
    # A fresh deal: a seeded table's rematch gets a seed derived from the old one (the
    # same seed would replay the same hands); an unseeded one gets a new secret seed.
    seed = rematch_seed(table.deal_seed) if table.deal_seed is not None else None
    game, _ = Game.start(players, seed=seed)
    return table.evolve(
        id=rematch_table_id(table.id),
        host_id=host_id,
        host_name=host_name,
        status=TableStatus.PLAYING,
        version=1,
        game=game,
        created_at=now,
        finished_at=None,
        rematch_requests=(),
        rematch_of=table.id,
        next_table_id=None,
        deal_seed=seed,
        # A new game: nobody is away, no clock has run out yet (the first turn's clock
        # is set when the table is stored).
        away=NO_AWAY,
        timeouts=NO_TIMEOUTS,
        timed_out=None,
        turn_deadline=None,
        # Rated again only with four humans (a rated game starts without bots).
        rated=table.rated and all(o is not None and not o.is_bot for o in table.occupants),
    )


def decide_rematch(
    table: TableSnapshot, player_id: str, now: float, window: float = REMATCH_WINDOW_SECONDS
) -> tuple[Change, TableSnapshot | None]:
    """The change one rematch request makes, and the new table if it completes the set.

    Asking again, or once the rematch started, changes nothing."""
    humans = human_seats(table)
    if not humans:
        raise RuleError(ErrorCode.WRONG_PHASE, "no human sits at this table: no rematch")
    seat = table.seat_of(player_id)
    if seat is None:
        raise RuleError(ErrorCode.FORBIDDEN, "only seated players ask for a rematch")
    if table.next_table_id is not None:
        return Change(), None
    if table.status is not TableStatus.FINISHED or table.game is None:
        raise RuleError(ErrorCode.WRONG_PHASE, "a rematch is only for a finished game")
    if table.finished_at is None or now > table.finished_at + window:
        raise RuleError(ErrorCode.WRONG_PHASE, "the rematch offer has expired")
    if seat in table.rematch_requests:
        return Change(), None
    requests = tuple(s for s in SEATS if s in table.rematch_requests or s is seat)
    change = Change()
    asked = table.evolve(version=table.version + 1, rematch_requests=requests)
    change.add(REMATCH_REQUESTED, asked, seat)
    change.log_entry(asked.version, 1, {"type": "rematch", "seat": seat.name})
    if not all(s in requests for s in humans):
        return change, None
    new = rematch_of(asked, now)
    started = asked.evolve(version=asked.version + 1, next_table_id=new.id)
    change.add(REMATCH_STARTED, started)
    change.log_entry(started.version, 1, {"type": "rematch_started", "table": new.id})
    return change, new


async def store_rematch_table(
    session: AsyncSession, old: TableSnapshot, new: TableSnapshot, holders: list[str]
) -> None:
    """Create the rematch table (row, seats, the start in its move log) and carry the old
    table's links and spectators over: link holders and the old table's spectators (added
    to `holders`) keep seeing and watching the new table."""
    assert new.game is not None
    await insert_table(session, new)
    await repo.append_moves(session, new.id, [(1, 1, start_entry(new.game))])
    links = (await session.exec(select(TableLinkRow).where(TableLinkRow.table_id == old.id))).all()
    for link in links:
        session.add(TableLinkRow(table_id=new.id, kind=link.kind, code_hash=link.code_hash))
    grants = (await session.exec(select(LinkGrantRow).where(LinkGrantRow.table_id == old.id))).all()
    for grant in grants:
        holders.append(grant.player_id)
        session.add(
            LinkGrantRow(
                table_id=new.id,
                player_id=grant.player_id,
                kind=grant.kind,
                code_hash=grant.code_hash,
            )
        )
    if new.visibility is not Visibility.PUBLIC:  # everyone sees a public one anyway
        kept = await _still_spectators(session, old, new)
        keep_spectators(session, new.id, kept)
        holders.extend(kept)
    await session.flush()


async def _still_spectators(
    session: AsyncSession, old: TableSnapshot, new: TableSnapshot
) -> list[str]:
    """The spectators of the old table: those who watched it (or kept access to it) and
    may still watch it as the rematch starts (not one whose friendship with the host or
    invitation ended meanwhile), and do not sit at the new table."""
    seated = {o.player_id for o in new.occupants if o is not None}
    kept: list[str] = []
    for player_id, username in await spectators_of(session, old.id):
        if player_id in seated:
            continue
        viewer = await load_viewer(session, Player(player_id, username))
        if can_watch(old, relation(viewer, old)):
            kept.append(player_id)
    return kept


def replayed_rematch(
    table: TableSnapshot, entry: LogEntry, version: int, requests: Sequence[Seat]
) -> tuple[GameMessage, tuple[Seat, ...]]:
    """A rematch change rebuilt from its move-log entry (catch-up by `since`), on the
    finished `table`; returns it and the seats that have asked after it."""
    if entry["type"] == "rematch":
        seat = Seat[entry["seat"]]
        asked = tuple(s for s in SEATS if s in requests or s is seat)
        state = table.evolve(version=version, rematch_requests=asked, next_table_id=None)
        return GameMessage(REMATCH_REQUESTED, seat, state), asked
    state = table.evolve(
        version=version, rematch_requests=tuple(requests), next_table_id=entry["table"]
    )
    return GameMessage(REMATCH_STARTED, None, state), tuple(requests)


class RematchService:
    """Takes rematch requests and opens the rematch table."""

    def __init__(
        self,
        ledger: Ledger,
        tables: TableService,
        social: SocialService,
        window_seconds: float = REMATCH_WINDOW_SECONDS,
    ) -> None:
        self.ledger = ledger
        self.tables = tables
        self.social = social
        self.window = window_seconds

    async def request(self, viewer: Viewer, table_id: str) -> TableSnapshot:
        """Ask for a rematch at `table_id`: the rematch table once it started (by this
        request or an earlier one), else the old table after the request."""
        await self.tables.get_visible(viewer, table_id)
        now = now_ts()
        opened: list[TableSnapshot] = []
        holders: list[str] = []

        def decide(table: TableSnapshot) -> Change:
            self.tables.visible(viewer, table)
            opened.clear()  # a retried decision forgets what an earlier try made
            holders.clear()
            change, new = decide_rematch(table, viewer.id, now, self.window)
            if new is not None:
                new = clocked(new, now, self.ledger.clock_scale)
                opened.append(new)
                change.effects.append(
                    lambda session: store_rematch_table(session, table, new, holders)
                )
            return change

        change, after = await self.ledger.change(table_id, decide)
        if opened and any(step.event == REMATCH_STARTED for step in change.steps):
            new = opened[0]
            await self.ledger.announce(new)
            # Link holders now see the new table: their live lobbies re-route.
            await self.social.notify_social_change(holders)
            self.ledger.opened(new)  # its reactions: bots to wake, its clock to arm
            return new
        if after.next_table_id is not None:
            return await self.ledger.get(after.next_table_id) or after
        return after
