"""Playing whole games through the API: humans that bid, pass and play on their turn.

A game of four humans makes a few hundred calls; `KeepAliveApi` sends them over one
kept-alive HTTP connection per player (a fresh connection per call costs ~50 ms).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Container, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from gql import Client, GraphQLRequest
from gql.client import AsyncClientSession
from gql.transport.exceptions import TransportQueryError
from gql.transport.httpx import HTTPXAsyncTransport

from app.rules.bidding import BidKind
from app.rules.cards import Card, Rank, Suit
from app.rules.game import Game
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, RevealHand
from app.rules.seats import Seat

from .client import GAME_FIELDS, Api, ApiError, next_update
from .server import LiveServer

SEATS = ("NORTH", "EAST", "SOUTH", "WEST")
PARTNER = {"NORTH": "SOUTH", "SOUTH": "NORTH", "EAST": "WEST", "WEST": "EAST"}
TEAM_OF = {"NORTH": "NORTH_SOUTH", "SOUTH": "NORTH_SOUTH", "EAST": "EAST_WEST", "WEST": "EAST_WEST"}

GAME_UPDATES = (
    "subscription($t: ID!) { gameUpdates(tableId: $t) "
    f"{{ event seat view {{ {GAME_FIELDS} }} }} }}"
)
GAME_RECORD = "query($t: ID!) { gameRecord(tableId: $t) }"
LOBBY_IDS = "{ lobby { id } }"

View = dict[str, Any]
CardDict = dict[str, str]
BidChooser = Callable[[View], dict[str, Any]]
PassChooser = Callable[[View], list[CardDict]]


class KeepAliveApi(Api):
    """An Api whose calls share one HTTP connection while `kept_alive()` is open.

    Its connections skip loading the CA bundle (plain http to the test server): httpx
    loads it for every new client, which costs more than a whole move.
    """

    _session: AsyncClientSession | None = None

    @asynccontextmanager
    async def kept_alive(self) -> AsyncIterator[KeepAliveApi]:
        """Reuse one connection (with the current token) for every call inside the block."""
        transport = HTTPXAsyncTransport(
            url=self.server.http_url, headers=self._headers(), timeout=30, verify=False
        )
        async with Client(transport=transport) as session:
            self._session = session
            try:
                yield self
            finally:
                self._session = None

    async def call(self, query: str, **variables: Any) -> dict[str, Any]:
        """As `Api.call`, over the kept-alive connection (a one-off one when none is open)."""
        if self._session is None:
            async with self.kept_alive():
                return await self.call(query, **variables)
        try:
            result = await self._session.execute(GraphQLRequest(query, variable_values=variables))
        except TransportQueryError as exc:
            raise ApiError(list(exc.errors or [{"message": str(exc)}])) from exc
        return dict(result)


# ----------------------------------------------------------------------------- cards


def card_of(card: CardDict) -> Card:
    """The engine card of an API card."""
    return Card(Suit[card["suit"]], Rank[card["rank"]])


def card_dict(card: Card) -> CardDict:
    """The API card of an engine card."""
    return {"suit": card.suit.name, "rank": card.rank.name}


def cards_of(cards: Iterable[CardDict] | None) -> list[Card]:
    """Engine cards of API cards (none for null)."""
    return [card_of(c) for c in cards or []]


def cards_in(payload: Any) -> set[Card]:
    """Every card anywhere in a JSON payload: any object with a suit and a rank."""
    found: set[Card] = set()
    if isinstance(payload, dict):
        if "suit" in payload and "rank" in payload:
            found.add(card_of(payload))
        for value in payload.values():
            found |= cards_in(value)
    elif isinstance(payload, list):
        for value in payload:
            found |= cards_in(value)
    return found


# ----------------------------------------------------------------------------- bids


def seat_state(view: View, seat: str) -> dict[str, Any]:
    """One seat's public state in a view."""
    return next(s for s in view["seats"] if s["seat"] == seat)


def team_state(view: View, team: str) -> dict[str, Any]:
    """One team's state in a view."""
    return next(t for t in view["teams"] if t["team"] == team)


def _partner_bid(view: View) -> dict[str, Any] | None:
    bid: dict[str, Any] | None = seat_state(view, PARTNER[view["turn"]])["bid"]
    return bid


def _team_total(view: View, own: int) -> dict[str, Any]:
    partner = _partner_bid(view)
    if partner is None:
        return {"kind": "TRICKS", "tricks": own}
    base = partner["tricks"] or 0
    return {"kind": "TRICKS", "tricks": min(13, base + own)}


def reasonable_bid(view: View) -> dict[str, Any]:
    """3 for the first bidder of a team; the second bids the team total (partner + 3)."""
    return _team_total(view, 3)


def north_south_overbid(view: View) -> dict[str, Any]:
    """NORTH_SOUTH bid a team total of 13 (and go set: -130 a hand), EAST_WEST a total of 2.

    Legal bids that end a game in two or three hands: NORTH_SOUTH fall to -250 or below.
    """
    if TEAM_OF[view["turn"]] == "NORTH_SOUTH":
        return _team_total(view, 13) if _partner_bid(view) else {"kind": "TRICKS", "tricks": 6}
    return _team_total(view, 1)


def blind_nil_first(base: BidChooser, hands: Container[int] | None = None) -> BidChooser:
    """Bid BLIND_NIL whenever eligible (in the given hand numbers only, if any), else as
    `base`."""

    def choose(view: View) -> dict[str, Any]:
        if view["blindNilEligible"] and (hands is None or view["handNumber"] in hands):
            return {"kind": "BLIND_NIL"}
        return base(view)

    return choose


def pass_extremes(view: View) -> list[CardDict]:
    """The blind nil bidder passes its two highest cards, the partner its two lowest."""
    hand: list[CardDict] = view["hand"]
    own_bid = seat_state(view, view["viewerSeat"])["bid"]
    if own_bid is not None and own_bid["kind"] == "BLIND_NIL":
        return hand[:2]
    return hand[-2:]


# ----------------------------------------------------------------------------- watching


@dataclass
class Watcher:
    """One gameUpdates subscription; `received` keeps every payload it delivered so far."""

    queue: asyncio.Queue[Any]
    received: list[dict[str, Any]] = field(default_factory=list)

    async def next(self, timeout: float = 10.0) -> dict[str, Any]:
        """The next GameUpdate (waiting for it)."""
        update = dict((await next_update(self.queue, timeout))["gameUpdates"])
        self.received.append(update)
        return update

    async def until(
        self, stop: Callable[[dict[str, Any]], bool], timeout: float = 10.0
    ) -> list[dict[str, Any]]:
        """The GameUpdates up to and including the first that `stop` accepts."""
        out: list[dict[str, Any]] = []
        while True:
            update = await self.next(timeout)
            out.append(update)
            if stop(update):
                return out

    async def view_at(self, version: int, timeout: float = 10.0) -> View:
        """The subscriber's view once it has received the update of `version` (or later)."""
        while not self.received or self.received[-1]["view"]["version"] < version:
            await self.next(timeout)
        view: View = self.received[-1]["view"]
        return view

    def drain(self) -> list[dict[str, Any]]:
        """The GameUpdates already delivered, without waiting."""
        out: list[dict[str, Any]] = []
        while not self.queue.empty():
            item = self.queue.get_nowait()
            if isinstance(item, Exception):
                raise item
            out.append(dict(dict(item)["gameUpdates"]))
        self.received.extend(out)
        return out


@asynccontextmanager
async def watching(apis: Mapping[str, Api], table_id: str) -> AsyncIterator[dict[str, Watcher]]:
    """A gameUpdates subscription per api (by the same keys), each past its SNAPSHOT."""
    async with AsyncExitStack() as stack:
        watchers: dict[str, Watcher] = {}
        for key, api in apis.items():
            queue = await stack.enter_async_context(api.subscribe(GAME_UPDATES, t=table_id))
            watchers[key] = Watcher(queue)
        for watcher in watchers.values():
            first = await watcher.next()
            assert first["event"] == "SNAPSHOT", first["event"]
        yield watchers


# ----------------------------------------------------------------------------- driving


async def take_turn(
    api: Api,
    table_id: str,
    view: View,
    choose_bid: BidChooser = reasonable_bid,
    choose_pass: PassChooser = pass_extremes,
    seen: Callable[[View], None] | None = None,
) -> View:
    """Make the viewer of `view` (whose turn it is) act once; return its view after it.

    A withheld hand is revealed right before a bid other than BLIND_NIL.
    """
    assert view["turn"] == view["viewerSeat"], (view["turn"], view["viewerSeat"])
    phase = view["phase"]
    if phase == "BIDDING":
        bid = choose_bid(view)
        if view["handWithheld"] and bid["kind"] != "BLIND_NIL":
            revealed = await api.reveal(table_id)
            if seen is not None:
                seen(revealed)
        after = await api.bid(table_id, bid["kind"], bid.get("tricks"))
    elif phase == "EXCHANGE":
        after = await api.pass_cards(table_id, choose_pass(view))
    elif phase == "PLAYING":
        after = await api.play(table_id, view["legalPlays"][0])
    else:
        raise AssertionError(f"nothing to do in {phase}")
    if seen is not None:
        seen(after)
    return after


@dataclass
class HumanTable:
    """Four humans at one table, driven move by move over HTTP."""

    table_id: str
    players: dict[str, KeepAliveApi]  # by seat
    choose_bid: BidChooser = reasonable_bid
    choose_pass: PassChooser = pass_extremes
    # With watchers (by seat), a seat reads its view from its own subscription, not a query.
    watchers: Mapping[str, Watcher] | None = None
    # Every view a query or a mutation answered, by the seat that received it.
    views: list[tuple[str, View]] = field(default_factory=list)

    async def view(self, seat: str, version: int | None = None) -> View:
        """`seat`'s own view: pushed at `version` when watched, else a query (recorded)."""
        if self.watchers is not None and version is not None:
            return await self.watchers[seat].view_at(version)
        view = await self.players[seat].game(self.table_id)
        self.views.append((seat, view))
        return view

    async def step(self, known: View | None = None) -> View:
        """The seat whose turn it is acts once; `known` is a fresh view of any seat."""
        current = known if known is not None else await self.view("NORTH")
        seat = current["turn"]
        assert seat in self.players, f"no human to act in {current['phase']} (turn {seat})"
        mine = (
            current if current["viewerSeat"] == seat else await self.view(seat, current["version"])
        )
        return await take_turn(
            self.players[seat],
            self.table_id,
            mine,
            self.choose_bid,
            self.choose_pass,
            lambda v: self.views.append((seat, v)),
        )

    async def play_until(self, done: Callable[[View], bool], max_moves: int = 1500) -> View:
        """Act until `done(view)` holds for the latest view (at most `max_moves` moves)."""
        view = await self.view("NORTH")
        for _ in range(max_moves):
            if done(view):
                return view
            view = await self.step(view)
        raise AssertionError(f"not done after {max_moves} moves: {view['phase']}")


def can_act(view: View) -> bool:
    """The viewer of `view` is the seat to act, with something it may do right now."""
    if view["viewerSeat"] is None or view["turn"] != view["viewerSeat"]:
        return False
    if view["phase"] in ("BIDDING", "EXCHANGE"):
        return True
    # Nothing to play on a complete trick (its fourth card's update, before TRICK_WON).
    return bool(view["phase"] == "PLAYING" and view["legalPlays"] and len(view["currentTrick"]) < 4)


async def play_with_bots(
    humans: Mapping[str, Api],
    watchers: Mapping[str, Watcher],
    table_id: str,
    done: Callable[[dict[str, Any]], bool],
    choose_bid: BidChooser = reasonable_bid,
    clock: str | None = None,
) -> dict[str, Any]:
    """Humans (by seat) act on their turns, read from their own subscriptions, while bots
    play server-side; returns the first update of the `clock` watcher that is `done`.

    Starts from the latest update the clock has received, so a call can resume where
    the previous one stopped."""
    ticker = watchers[clock if clock is not None else next(iter(humans))]
    update = ticker.received[-1] if ticker.received else await ticker.next()
    while not done(update):
        seat = update["view"]["turn"]
        upto = update["view"]["version"] + 1
        if seat in humans:
            mine = await watchers[seat].view_at(update["view"]["version"])
            if mine["version"] == update["view"]["version"] and can_act(mine):
                # Skip past the updates of this very move (a reveal and a bid are two).
                upto = (await take_turn(humans[seat], table_id, mine, choose_bid))["version"]
        update = await ticker.next()
        while update["view"]["version"] < upto and not done(update):
            update = await ticker.next()
    return update


def game_over(view: View) -> bool:
    """The game has a winner."""
    return bool(view["phase"] == "GAME_OVER")


def hands_scored(count: int) -> Callable[[View], bool]:
    """`count` hands are scored (or the game is over)."""
    return lambda view: game_over(view) or len(view["history"]) >= 2 * count


def phase_is(phase: str, hand_number: int | None = None) -> Callable[[View], bool]:
    """The game reached `phase` (of hand `hand_number`, if given)."""
    return lambda view: (
        view["phase"] == phase and (hand_number is None or view["handNumber"] == hand_number)
    )


# ----------------------------------------------------------------------------- setup


async def sign_up_players(server: LiveServer, count: int) -> list[KeepAliveApi]:
    """`count` freshly signed-up players."""
    players = [KeepAliveApi(server) for _ in range(count)]
    for player in players:
        await player.sign_up()
    return players


@asynccontextmanager
async def kept_alive(*apis: KeepAliveApi) -> AsyncIterator[None]:
    """Keep a connection open for each of `apis`."""
    async with AsyncExitStack() as stack:
        for api in apis:
            await stack.enter_async_context(api.kept_alive())
        yield


async def game_record(api: Api, table_id: str) -> dict[str, Any]:
    """The spades-record/1 JSON of a finished game."""
    return dict((await api.call(GAME_RECORD, t=table_id))["gameRecord"])


async def lobby_ids(api: Api) -> set[str]:
    """Ids of the tables the caller's lobby lists."""
    return {t["id"] for t in (await api.call(LOBBY_IDS))["lobby"]}


# ----------------------------------------------------------------------------- engine


def states_of_record(record: Mapping[str, Any]) -> list[Game]:
    """The game after each change, GAME_STARTED first, rebuilt from a seeded record.

    Index i is the state at version (GAME_STARTED's version + i). Assumes a withheld
    hand was revealed right before its owner's bid (as `take_turn` does) and that no
    player was replaced.
    """
    players = [str(record["players"][s]) for s in SEATS]
    game, _ = Game.start(players, seed=int(record["seed"]))
    states = [game.copy()]

    def apply(move: Move) -> None:
        states.extend(step.state for step in game.apply_steps(move))

    for hand in record["hands"]:
        assert "players" not in hand, "players changed during the game"
        for entry in hand["bids"]:
            seat, value = Seat[entry["seat"]], entry["bid"]
            kind = BidKind.TRICKS if isinstance(value, int) else BidKind(value)
            if game.hand.withheld[seat] and kind is not BidKind.BLIND_NIL:
                apply(RevealHand(seat))
            apply(PlaceBid(seat, kind, value if isinstance(value, int) else None))
        for entry in hand["exchanges"]:
            apply(PassCards(Seat[entry["from"]], tuple(Card.parse(c) for c in entry["cards"])))
        for trick in hand["tricks"]:
            for play in trick["plays"]:
                apply(PlayCard(Seat[play["seat"]], Card.parse(play["card"])))
    return states
