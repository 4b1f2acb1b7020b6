"""Whole games through the real server: humans, bots, a spectator, a leaver, a blind nil."""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

from app.rules.cards import Card, Suit, sort_hand
from app.rules.dealing import deal_hands
from app.rules.record import FORMAT, replay_record
from app.rules.seats import Seat
from tests.support.client import Api
from tests.support.play import (
    PARTNER,
    SEATS,
    HumanTable,
    KeepAliveApi,
    View,
    Watcher,
    can_act,
    card_dict,
    cards_in,
    cards_of,
    game_over,
    game_record,
    hands_scored,
    kept_alive,
    lobby_ids,
    north_south_overbid,
    phase_is,
    play_with_bots,
    seat_state,
    sign_up_players,
    team_state,
    watching,
)
from tests.support.server import LiveServer

TEAMS = ("NORTH_SOUTH", "EAST_WEST")
BOTS = ("EAST", "SOUTH", "WEST")
MOVES = {"BID_PLACED", "HAND_REVEALED", "CARDS_PASSED", "CARD_PLAYED"}

FULL_GAME_SEED = 7
BOTS_SEED = 21
SPECTATOR_SEED = 3
LEAVE_SEED = 5
BLIND_NIL_SEED = 16


def assert_consecutive(updates: list[dict[str, Any]]) -> None:
    """Versions go up by exactly one from update to update."""
    versions = [u["view"]["version"] for u in updates]
    assert versions == list(range(versions[0], versions[0] + len(versions))), versions


def deal(seed: int, hand_number: int, seat: str) -> list[Card]:
    """What the engine deals `seat` in hand `hand_number` of a game with `seed`."""
    return list(deal_hands(seed, hand_number)[Seat[seat]])


async def seat_four_humans(
    server: LiveServer, seed: int, sit: bool = True
) -> tuple[str, dict[str, KeepAliveApi], KeepAliveApi]:
    """A seeded PUBLIC table hosted by NORTH, four players by seat, and a fifth player.
    With `sit`, EAST, SOUTH and WEST take their seats (the game starts); else not yet."""
    *seated, outsider = await sign_up_players(server, 5)
    table = await seated[0].create_table(name="humans", seed=seed)
    players = dict(zip(SEATS, seated, strict=True))
    if sit:
        for seat in SEATS[1:]:
            await players[seat].join(table["id"], seat)
    return table["id"], players, outsider


# ----------------------------------------------------------------------------- four humans


async def test_four_humans_play_a_seeded_game_to_game_over_with_a_replayable_record(
    server: LiveServer,
) -> None:
    table_id, players, outsider = await seat_four_humans(server, FULL_GAME_SEED)
    async with kept_alive(*players.values(), outsider):
        assert table_id in await lobby_ids(outsider)
        humans = HumanTable(table_id, players, choose_bid=north_south_overbid)
        final = await humans.play_until(game_over)

        hands = final["handNumber"]
        history = final["history"]
        assert final["winner"] == "EAST_WEST"  # NORTH_SOUTH went set by 130 every hand
        assert final["turn"] is None and final["legalPlays"] == []
        assert len(history) == 2 * hands
        assert [(h["handNumber"], h["team"]) for h in history] == [
            (n, t) for n in range(1, hands + 1) for t in TEAMS
        ]
        for team in TEAMS:
            results = [h for h in history if h["team"] == team]
            score = 0
            for result in results:
                score += result["points"]
                assert result["scoreAfter"] == score
            state = team_state(final, team)
            assert state["score"] == results[-1]["scoreAfter"]
            assert state["bags"] == results[-1]["bagsAfter"]
        assert all(h["target"] == 13 for h in history if h["team"] == "NORTH_SOUTH")

        for seat, api in players.items():  # every seat sees the same final result
            view = await api.game(table_id)
            assert view["phase"] == "GAME_OVER" and view["viewerSeat"] == seat
            assert (view["winner"], view["history"]) == (final["winner"], history)

        record = await game_record(outsider, table_id)
        assert record["format"] == FORMAT == "spades-record/1"
        assert record["players"] == {s: players[s].player_id for s in SEATS}
        assert len(record["hands"]) == hands
        assert record["winner"] == final["winner"]
        assert record["finalScores"] == {t: team_state(final, t)["score"] for t in TEAMS}
        replayed = replay_record(record)
        assert replayed.winner is not None and replayed.winner.name == final["winner"]
        assert [r.score_after for r in replayed.history] == [h["scoreAfter"] for h in history]

        assert table_id not in await lobby_ids(outsider)
        assert table_id not in await lobby_ids(players["NORTH"])
        assert (
            await players["EAST"].error(
                "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 1}) "
                "{ version } }",
                t=table_id,
            )
            == "WRONG_PHASE"
        )


# ----------------------------------------------------------------------------- bots


def expected_bot_bid(seed: int, view_before: View, seat: str) -> int:
    """The basic bot's bid: its spade count, plus its partner's number if it bid first."""
    spades = sum(1 for c in deal(seed, view_before["handNumber"], seat) if c.suit is Suit.SPADES)
    partner = seat_state(view_before, PARTNER[seat])["bid"]
    if partner is None or partner["tricks"] is None:
        return spades
    return min(13, int(partner["tricks"]) + spades)


async def test_one_human_and_three_bots_each_bot_move_is_its_own_consecutive_update(
    server: LiveServer,
) -> None:
    (human,) = await sign_up_players(server, 1)
    table_id = (await human.create_table(name="bots", seed=BOTS_SEED))["id"]
    async with kept_alive(human), watching({"NORTH": human}, table_id) as watchers:
        for seat in BOTS:
            await human.add_bot(table_id, seat)
        await play_with_bots(
            {"NORTH": human}, watchers, table_id, lambda u: hands_scored(2)(u["view"])
        )
        updates = watchers["NORTH"].received

    assert_consecutive(updates)
    events = [u["event"] for u in updates]
    assert events[:5] == ["SNAPSHOT", "SEAT_TAKEN", "SEAT_TAKEN", "SEAT_TAKEN", "GAME_STARTED"]
    for seat in BOTS:
        state = seat_state(updates[-1]["view"], seat)
        assert state["isBot"] and state["playerId"] == f"bot:{seat.lower()}"

    hands_played = Counter(u["view"]["handNumber"] for u in updates if u["event"] == "HAND_SCORED")
    assert sorted(hands_played) == [1, 2] and set(hands_played.values()) == {1}
    for number in (1, 2):
        of_hand = [u for u in updates[4:] if u["view"]["handNumber"] == number]
        counts = Counter((u["event"], u["seat"]) for u in of_hand)
        for seat in SEATS:
            assert counts["BID_PLACED", seat] == 1
            assert counts["CARD_PLAYED", seat] == 13
        assert sum(n for (e, _), n in counts.items() if e == "TRICK_WON") == 13

    for before, update in pairwise(updates):
        seat, view = update["seat"], update["view"]
        if update["event"] == "BID_PLACED":
            assert seat_state(before["view"], seat)["bid"] is None
            bid = seat_state(view, seat)["bid"]
            assert bid is not None
            if seat in BOTS:  # the reference bot's bid, placed as its own update
                assert bid == {
                    "kind": "TRICKS",
                    "tricks": expected_bot_bid(BOTS_SEED, before["view"], seat),
                }
        if update["event"] == "CARD_PLAYED":
            trick_before = before["view"]["currentTrick"]
            assert view["currentTrick"][:-1] == trick_before
            assert view["currentTrick"][-1]["seat"] == seat
            assert (
                seat_state(view, seat)["cardCount"]
                == seat_state(before["view"], seat)["cardCount"] - 1
            )


async def test_turn_and_legal_plays_never_offer_a_move_the_server_would_refuse(
    server: LiveServer,
) -> None:
    """`turn` names the seat whose move comes next, and `legalPlays` are only offered when
    they could be played right then: never on a complete trick (the update of its fourth
    card, before TRICK_WON) nor on a complete hand (before it is scored)."""
    (human,) = await sign_up_players(server, 1)
    table_id = (await human.create_table(name="turns", seed=BOTS_SEED))["id"]
    async with kept_alive(human), watching({"NORTH": human}, table_id) as watchers:
        for seat in BOTS:
            await human.add_bot(table_id, seat)
        await play_with_bots(
            {"NORTH": human}, watchers, table_id, lambda u: hands_scored(2)(u["view"])
        )
        updates = watchers["NORTH"].received

    for update, after in pairwise(updates):
        if after["event"] in MOVES - {"HAND_REVEALED"}:
            assert update["view"]["turn"] == after["seat"], (update["event"], after["event"])
    complete = 0
    for update in updates:
        view = update["view"]
        hand_done = all(s["cardCount"] == 0 for s in view["seats"])
        if len(view["currentTrick"]) == 4 or (hand_done and view["phase"] == "PLAYING"):
            complete += 1
            # Nobody can move on a complete trick or hand until it is won or scored.
            where = (update["event"], view["version"], view["turn"], view["legalPlays"])
            assert view["turn"] is None, where
            assert view["legalPlays"] == [], where
        if view["legalPlays"]:
            assert can_act(view)
    assert complete == 2 * (13 + 2)  # per hand: 13 fourth cards, the last trick won, scored


# ----------------------------------------------------------------------------- spectators

SPECTATOR_MOVES: dict[str, tuple[str, dict[str, Any]]] = {
    "placeBid": (
        "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) { version } }",
        {},
    ),
    "revealHand": ("mutation($t: ID!) { revealHand(tableId: $t) { version } }", {}),
    "playCard": (
        "mutation($t: ID!) { playCard(tableId: $t, card: {suit: HEARTS, rank: TWO}) { version } }",
        {},
    ),
    "passCards": (
        "mutation($t: ID!) { passCards(tableId: $t, cards: [{suit: HEARTS, rank: TWO}, "
        "{suit: HEARTS, rank: THREE}]) { version } }",
        {},
    ),
    "leaveTable": ("mutation($t: ID!) { leaveTable(tableId: $t) }", {}),
}


async def assert_spectator_is_forbidden_to_move(spectator: Api, table_id: str) -> None:
    for name, (query, extra) in SPECTATOR_MOVES.items():
        assert await spectator.error(query, t=table_id, **extra) == "FORBIDDEN", name


def assert_spectator_view(view: View) -> None:
    assert view["viewerSeat"] is None
    assert view["hand"] is None
    assert view["legalPlays"] == []
    assert view["handWithheld"] is False and view["blindNilEligible"] is False
    trick_cards = cards_of([p["card"] for p in view["currentTrick"]])
    last = view["lastTrick"]
    last_cards = cards_of([p["card"] for p in last["plays"]]) if last else []
    assert cards_in(view) == set(trick_cards) | set(last_cards)


async def test_a_spectator_gets_every_update_as_a_spectator_view_and_may_not_move(
    server: LiveServer,
) -> None:
    host, spectator = await sign_up_players(server, 2)
    table = await host.create_table(name="watched", seed=SPECTATOR_SEED, visibility="PUBLIC")
    assert table["spectating"] is True and table["visibility"] == "PUBLIC"
    table_id = table["id"]
    async with (
        kept_alive(host, spectator),
        watching({"NORTH": host, "spectator": spectator}, table_id) as watchers,
    ):
        for seat in BOTS:
            await host.add_bot(table_id, seat)

        def check_now(update: dict[str, Any]) -> bool:
            view = update["view"]
            return bool(view["phase"] == "PLAYING" and view["turn"] == "NORTH")

        await play_with_bots({"NORTH": host}, watchers, table_id, check_now)
        await assert_spectator_is_forbidden_to_move(spectator, table_id)
        assert_spectator_view(await spectator.game(table_id))
        last = await play_with_bots(
            {"NORTH": host}, watchers, table_id, lambda u: hands_scored(1)(u["view"])
        )
        await watchers["spectator"].view_at(last["view"]["version"])
        seen_by_host = watchers["NORTH"].received
        seen_by_spectator = watchers["spectator"].received

    assert_consecutive(seen_by_spectator)
    assert [(u["event"], u["seat"], u["view"]["version"]) for u in seen_by_spectator] == [
        (u["event"], u["seat"], u["view"]["version"]) for u in seen_by_host
    ]
    for update in seen_by_spectator:
        assert_spectator_view(update["view"])
    assert any(u["event"] == "HAND_SCORED" for u in seen_by_spectator)


# ----------------------------------------------------------------------------- leaving


async def test_a_human_leaving_mid_game_is_replaced_by_a_bot_that_plays_on(
    server: LiveServer,
) -> None:
    host, guest = await sign_up_players(server, 2)
    table_id = (await host.create_table(name="leaver", seed=LEAVE_SEED))["id"]
    humans = {"NORTH": host, "EAST": guest}
    async with kept_alive(host, guest), watching(humans, table_id) as watchers:
        await guest.join(table_id, "EAST")
        for seat in ("SOUTH", "WEST"):
            await host.add_bot(table_id, seat)

        def east_to_play_mid_hand(update: dict[str, Any]) -> bool:
            view = update["view"]
            return (
                view["phase"] == "PLAYING"
                and view["lastTrick"] is not None
                and view["turn"] == "EAST"
                and len(view["currentTrick"]) < 4
            )

        before = await play_with_bots(humans, watchers, table_id, east_to_play_mid_hand)
        assert await guest.leave(table_id) is True

        replaced = await watchers["NORTH"].next()
        assert replaced["event"] == "PLAYER_REPLACED" and replaced["seat"] == "EAST"
        assert replaced["view"]["version"] == before["view"]["version"] + 1
        east = seat_state(replaced["view"], "EAST")
        assert east["playerId"] == "bot:east" and east["isBot"] is True
        assert east["cardCount"] == seat_state(before["view"], "EAST")["cardCount"]
        assert replaced["view"]["currentTrick"] == before["view"]["currentTrick"]

        bot_move = await watchers["NORTH"].next()
        assert bot_move["event"] == "CARD_PLAYED" and bot_move["seat"] == "EAST"
        assert bot_move["view"]["version"] == replaced["view"]["version"] + 1

        # The guest no longer sits there: a spectator's view, no cards, no moves.
        guest_view = await watchers["EAST"].view_at(replaced["view"]["version"])
        assert guest_view["viewerSeat"] is None and guest_view["hand"] is None
        assert (
            await guest.error(
                "mutation($t: ID!) { playCard(tableId: $t, card: {suit: HEARTS, rank: TWO}) "
                "{ version } }",
                t=table_id,
            )
            == "FORBIDDEN"
        )

        last = await play_with_bots(
            {"NORTH": host}, watchers, table_id, lambda u: hands_scored(2)(u["view"]), clock="NORTH"
        )
        after_leave = [
            u
            for u in watchers["NORTH"].received
            if replaced["view"]["version"] <= u["view"]["version"] <= last["view"]["version"]
        ]
        assert table_id in await lobby_ids(host)

    assert_consecutive(watchers["NORTH"].received)
    assert after_leave[0]["event"] == "PLAYER_REPLACED"
    # The bot played the rest of EAST's hand 1, then bid and played all of hand 2.
    assert before["view"]["handNumber"] == 1
    east_moves = Counter(u["event"] for u in after_leave if u["seat"] == "EAST")
    assert east_moves["CARD_PLAYED"] == east["cardCount"] + 13
    assert east_moves["BID_PLACED"] == 1
    assert all(seat_state(u["view"], "EAST")["isBot"] for u in after_leave)


# ----------------------------------------------------------------------------- blind nil


def payload_cards_outside_tricks(view: View) -> set[Card]:
    """Cards a payload shows anywhere but in the current and last trick (played cards)."""
    hidden = {k: v for k, v in view.items() if k not in ("currentTrick", "lastTrick")}
    return cards_in(hidden)


async def test_blind_nil_with_its_exchange_through_the_api(server: LiveServer) -> None:
    seed = BLIND_NIL_SEED
    table_id, players, spectator = await seat_four_humans(server, seed, sit=False)
    apis: dict[str, Api] = {**players, "spectator": spectator}
    async with kept_alive(*players.values(), spectator), watching(apis, table_id) as watchers:
        for seat in SEATS[1:]:
            await players[seat].join(table_id, seat)
        humans = HumanTable(table_id, players, north_south_overbid, watchers=watchers)
        dealt = await humans.play_until(phase_is("BIDDING", 2))

        # Hand 2: NORTH_SOUTH went set by 130 and are 100+ behind, so both are withheld.
        ns, ew = (team_state(dealt, t)["score"] for t in TEAMS)
        assert ns <= ew - 100, (ns, ew)
        assert dealt["dealer"] == "EAST" and dealt["turn"] == "SOUTH"
        for seat in SEATS:
            queried = await players[seat].game(table_id)
            pushed = await watchers[seat].view_at(dealt["version"])
            assert pushed["version"] == queried["version"] == dealt["version"]
            assert watchers[seat].received[-1]["event"] == "HAND_DEALT"
            for view in (queried, pushed):
                withheld = seat in ("NORTH", "SOUTH")
                assert view["handWithheld"] is withheld, seat
                assert view["blindNilEligible"] is withheld, seat
                if withheld:
                    assert view["hand"] is None and cards_in(view) == set(), seat
                else:
                    assert cards_of(view["hand"]) == deal(seed, 2, seat)

        bid_query = (
            "mutation($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) { version } }"
        )
        blind_nil = {"kind": "BLIND_NIL"}
        assert await players["NORTH"].error(bid_query, t=table_id, b=blind_nil) == "NOT_YOUR_TURN"
        assert (
            await players["SOUTH"].error(bid_query, t=table_id, b={"kind": "TRICKS", "tricks": 3})
            == "INVALID_BID"
        )
        assert (
            await players["SOUTH"].error(bid_query, t=table_id, b={"kind": "NIL"}) == "INVALID_BID"
        )
        assert (
            await players["EAST"].error(
                "mutation($t: ID!) { revealHand(tableId: $t) { version } }", t=table_id
            )
            == "NOT_ELIGIBLE"
        )
        assert (await players["SOUTH"].game(table_id))["version"] == dealt["version"]

        south = await players["SOUTH"].bid(table_id, "BLIND_NIL")
        assert cards_of(south["hand"]) == deal(seed, 2, "SOUTH")  # shown once bid
        assert south["handWithheld"] is False and south["blindNilEligible"] is False
        assert seat_state(south, "SOUTH")["bid"] == {"kind": "BLIND_NIL", "tricks": None}
        # One blind nil per team: NORTH can no longer bid it and gets its cards at once.
        for north in (
            await players["NORTH"].game(table_id),
            await watchers["NORTH"].view_at(south["version"]),
        ):
            assert north["handWithheld"] is False and north["blindNilEligible"] is False
            assert cards_of(north["hand"]) == deal(seed, 2, "NORTH")

        await players["WEST"].bid(table_id, "TRICKS", 1)
        assert await players["NORTH"].error(bid_query, t=table_id, b=blind_nil) == "NOT_ELIGIBLE"
        await players["NORTH"].bid(table_id, "TRICKS", 4)
        exchange = await players["EAST"].bid(table_id, "TRICKS", 2)
        assert exchange["phase"] == "EXCHANGE" and exchange["turn"] == "SOUTH"
        assert team_state(exchange, "NORTH_SOUTH")["target"] == 4

        pass_query = (
            "mutation($t: ID!, $c: [CardInput!]!) { passCards(tableId: $t, cards: $c) { version } }"
        )
        south_hand = deal(seed, 2, "SOUTH")
        north_hand = deal(seed, 2, "NORTH")
        given = south_hand[:2]  # SOUTH's two highest
        back = north_hand[-2:]  # NORTH's two lowest
        given_dicts = [card_dict(c) for c in given]
        assert (
            await players["NORTH"].error(pass_query, t=table_id, c=[card_dict(c) for c in back])
            == "NOT_YOUR_TURN"
        )
        assert (
            await players["SOUTH"].error(pass_query, t=table_id, c=[given_dicts[0], given_dicts[0]])
            == "BAD_USER_INPUT"
        )
        assert (
            await players["SOUTH"].error(
                pass_query, t=table_id, c=[given_dicts[0], card_dict(north_hand[0])]
            )
            == "CARD_NOT_IN_HAND"
        )

        first_pass = await players["SOUTH"].pass_cards(table_id, given_dicts)
        assert first_pass["phase"] == "EXCHANGE" and first_pass["turn"] == "NORTH"
        assert cards_of(first_pass["hand"]) == [c for c in south_hand if c not in given]
        north_view = await watchers["NORTH"].view_at(first_pass["version"])
        # The passed cards join NORTH's hand only after NORTH passed back.
        assert cards_of(north_view["hand"]) == north_hand
        assert (
            await players["NORTH"].error(
                pass_query, t=table_id, c=[given_dicts[0], card_dict(back[0])]
            )
            == "CARD_NOT_IN_HAND"
        )

        second_pass = await players["NORTH"].pass_cards(table_id, [card_dict(c) for c in back])
        assert second_pass["phase"] == "PLAYING" and second_pass["turn"] == "SOUTH"
        expected_north = sort_hand([c for c in north_hand if c not in back] + given)
        expected_south = sort_hand([c for c in south_hand if c not in given] + back)
        assert cards_of(second_pass["hand"]) == expected_north
        assert cards_of((await players["SOUTH"].game(table_id))["hand"]) == expected_south
        south_pushed = await watchers["SOUTH"].view_at(second_pass["version"])
        assert cards_of(south_pushed["hand"]) == expected_south

        scored = await humans.play_until(hands_scored(2))
        for watcher in watchers.values():
            await watcher.view_at(scored["version"])
            watcher.drain()

    for key in ("NORTH", "SOUTH", "EAST", "WEST", "spectator"):
        passes = [u for u in watchers[key].received if u["event"] == "CARDS_PASSED"]
        assert [u["seat"] for u in passes] == ["SOUTH", "NORTH"]

    # Only the two partners ever saw the exchanged cards (until they were played).
    passed = set(given) | set(back)
    outsiders: dict[str, Watcher] = {k: watchers[k] for k in ("EAST", "WEST", "spectator")}
    for key, watcher in outsiders.items():
        hand_2 = [u for u in watcher.received if u["view"]["handNumber"] == 2]
        first_play = next(i for i, u in enumerate(hand_2) if u["event"] == "CARD_PLAYED")
        for i, update in enumerate(hand_2):
            view = update["view"]
            assert not passed & payload_cards_outside_tricks(view), (key, update["event"])
            if i < first_play:
                assert not passed & cards_in(view), (key, update["event"])

    # The blind nil was scored: +/-100 for SOUTH, NORTH's 4 as the team's target.
    last_scored = next(
        u for u in reversed(watchers["spectator"].received) if u["event"] == "HAND_SCORED"
    )
    result = next(
        h
        for h in last_scored["view"]["history"]
        if h["handNumber"] == 2 and h["team"] == "NORTH_SOUTH"
    )
    south_tricks = seat_state(last_scored["view"], "SOUTH")["tricksWon"]
    north_tricks = seat_state(last_scored["view"], "NORTH")["tricksWon"]
    blind = 100 if south_tricks == 0 else -100
    tricks = south_tricks + north_tricks
    made = 40 + (tricks - 4) if tricks >= 4 else -40
    assert result["target"] == 4 and result["tricks"] == tricks
    assert result["points"] == blind + made - result["bagPenalty"]
