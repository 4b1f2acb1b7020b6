"""No one is ever sent a card they may not see, over a whole game with a blind nil exchange.

Four humans and a spectator subscribe to the game from before it starts. The game is
rebuilt move by move from its record through the engine, so for every payload we know
each seat's unplayed cards at that payload's version: a seat may see its own hand
(never while withheld for blind nil) and the played cards in the tricks; a spectator
only the played cards.
"""

from __future__ import annotations

from typing import Any

from app.rules.cards import Card
from app.rules.game import Game, Phase
from app.rules.seats import TEAMS, Seat
from tests.support.play import (
    SEATS,
    HumanTable,
    View,
    blind_nil_first,
    card_of,
    cards_in,
    cards_of,
    game_over,
    game_record,
    kept_alive,
    north_south_overbid,
    phase_is,
    sign_up_players,
    states_of_record,
    watching,
)
from tests.support.server import LiveServer

# With this seed NORTH_SOUTH go set in hand 1, SOUTH bids blind nil in hand 2 (with the
# exchange) and the game ends after it: two hands, ~120 moves.
PRIVACY_SEED = 4

OWN_GAME_PATHS = """
query($t: ID!) {
  table(id: $t) { game { viewerSeat handWithheld hand { suit rank } legalPlays { suit rank } } }
  lobby { id game { viewerSeat handWithheld hand { suit rank } legalPlays { suit rank } } }
}
"""


def played_cards(game: Game) -> set[Card]:
    """Every card played so far in the game's current hand."""
    hand = game.hand
    return {c for t in hand.tricks for _, c in t.plays} | {c for _, c in hand.current}


def check_view(view: View, seat: str | None, states: list[Game], started: int) -> None:
    """`view` (received by `seat`, None for the spectator) shows exactly what that viewer
    may see at the view's version, and no other card."""
    version = view["version"]
    where = (seat, version, view["phase"])
    if version < started:  # before the deal: no card at all
        assert view["phase"] == "WAITING" and view["hand"] is None, where
        assert cards_in(view) == set(), where
        return
    game = states[version - started]
    hand = game.hand
    assert (view["phase"], view["handNumber"]) == (game.phase.value, hand.number), where
    check_public_facts(view, game)
    allowed = played_cards(game)
    if seat is None:
        assert view["viewerSeat"] is None and view["hand"] is None, where
        assert view["handWithheld"] is False and view["legalPlays"] == [], where
    else:
        assert view["viewerSeat"] == seat, where
        own = hand.hands[Seat[seat]]
        withheld = game.phase is Phase.BIDDING and hand.withheld[Seat[seat]]
        assert view["handWithheld"] is withheld, where
        assert view["blindNilEligible"] is withheld, where
        if withheld:
            assert view["hand"] is None, where
        else:
            assert cards_of(view["hand"]) == own, where
            allowed |= set(own)
        legal = cards_of(view["legalPlays"])
        assert set(legal) <= set(own) and (not legal or not withheld), where
        assert not legal or game.turn is Seat[seat], where
    shown = cards_in(view)
    assert shown <= allowed, (*where, sorted(shown - allowed))
    trick = [(p["seat"], card_of(p["card"])) for p in view["currentTrick"]]
    assert trick == [(s.name, c) for s, c in hand.current], where
    last = hand.tricks[-1] if hand.tricks else None
    if last is None:
        assert view["lastTrick"] is None, where
    else:
        plays = [(p["seat"], card_of(p["card"])) for p in view["lastTrick"]["plays"]]
        assert plays == [(s.name, c) for s, c in last.plays], where


def check_public_facts(view: View, game: Game) -> None:
    """Turn, bids, trick counts, card counts and team totals are the engine's."""
    hand = game.hand
    where = (view["viewerSeat"], view["version"])
    assert view["turn"] == (game.turn.name if game.turn is not None else None), where
    for state in view["seats"]:
        seat = Seat[state["seat"]]
        bid = hand.bids[seat]
        expected = None if bid is None else {"kind": bid.kind.value, "tricks": bid.tricks}
        assert state["bid"] == expected, where
        assert state["tricksWon"] == hand.tricks_won[seat], where
        assert state["cardCount"] == len(hand.hands[seat]), where
    for team, state in zip(TEAMS, view["teams"], strict=True):
        assert state["team"] == team.name, where
        assert (state["score"], state["bags"]) == (game.scores[team], game.bags[team]), where
        assert state["target"] == hand.target(team), where


async def check_other_query_paths(api: Any, table_id: str, withheld: bool) -> None:
    """`table { game }` and `lobby { game }` hide a withheld hand like `game` does."""
    data = await api.call(OWN_GAME_PATHS, t=table_id)
    in_lobby = next(t["game"] for t in data["lobby"] if t["id"] == table_id)
    for game in (data["table"]["game"], in_lobby):
        assert game["handWithheld"] is withheld
        assert (game["hand"] is None) is withheld


async def test_no_payload_ever_holds_a_card_its_receiver_may_not_see(
    server: LiveServer,
) -> None:
    *seated, spectator = await sign_up_players(server, 5)
    players = dict(zip(SEATS, seated, strict=True))
    table_id = (await players["NORTH"].create_table(name="privacy", seed=PRIVACY_SEED))["id"]
    subscribers = {**players, "spectator": spectator}
    async with kept_alive(*seated, spectator), watching(subscribers, table_id) as watchers:
        for seat in SEATS[1:]:
            await players[seat].join(table_id, seat)
        humans = HumanTable(
            table_id,
            players,
            choose_bid=blind_nil_first(north_south_overbid, hands={2}),
            watchers=watchers,
        )
        spectator_views: list[View] = []
        # Look through every query path at the interesting moments, too.
        for moment in (phase_is("BIDDING", 2), phase_is("EXCHANGE", 2), phase_is("PLAYING", 2)):
            await humans.play_until(moment)
            for seat in SEATS:
                view = await humans.view(seat)
                await check_other_query_paths(players[seat], table_id, view["handWithheld"])
            spectator_views.append(await spectator.game(table_id))
        final = await humans.play_until(game_over)
        for watcher in watchers.values():
            await watcher.view_at(final["version"])
            watcher.drain()
        spectator_views.append(await spectator.game(table_id))
        record = await game_record(spectator, table_id)

    # The game had what we came for: a withheld hand, a blind nil and its exchange.
    hand_2 = record["hands"][1]
    assert {"seat": "SOUTH", "bid": "BLIND_NIL"} in hand_2["bids"]
    assert [(e["from"], e["to"]) for e in hand_2["exchanges"]] == [
        ("SOUTH", "NORTH"),
        ("NORTH", "SOUTH"),
    ]
    states = states_of_record(record)
    received = {key: watcher.received for key, watcher in watchers.items()}
    started = next(u for u in received["NORTH"] if u["event"] == "GAME_STARTED")["view"]["version"]
    assert started + len(states) - 1 == final["version"]

    for key, updates in received.items():
        versions = [u["view"]["version"] for u in updates]
        assert versions == list(range(versions[0], final["version"] + 1)), key  # every update
        assert updates[-1]["event"] == "GAME_OVER"
        viewer = key if key in SEATS else None
        for update in updates:  # (before the deal, a joiner still watches as a spectator)
            check_view(update["view"], viewer, states, started)
    for seat, view in humans.views:  # every query and mutation answer too
        check_view(view, seat, states, started)
    for view in spectator_views:
        check_view(view, None, states, started)

    withheld = [
        (key, u["view"]["version"])
        for key, updates in received.items()
        for u in updates
        if u["view"]["handWithheld"]
    ]
    assert {key for key, _ in withheld} == {"NORTH", "SOUTH"}  # the check covered them
