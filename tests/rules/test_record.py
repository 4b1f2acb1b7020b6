"""Game records (`spades-record/1`, docs/record.md): export shape and replay."""

from __future__ import annotations

import copy
import json
import random
import re
from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from app.rules.bidding import NIL, Bid
from app.rules.bots import POLICIES, PolicyName
from app.rules.cards import Card, sort_key
from app.rules.dealing import deal_hands
from app.rules.game import Game, Phase
from app.rules.moves import ReplacePlayer
from app.rules.record import FORMAT, ReplayError, export_record, replay_record
from app.rules.scoring import score_team
from app.rules.seats import SEATS, Seat, Team
from app.rules.simulate import play_game

Record = dict[str, Any]

SEAT_NAMES = [s.name for s in SEATS]  # clockwise from NORTH
TEAM_NAMES = [t.name for t in Team]
BOTS = {s.name: s.bot_id for s in SEATS}
HUMANS = ("alice", "bob", "carol", "dave")
CARD_CODE = re.compile(r"^(10|[2-9JQKA])[SHCD]$")
RECORD_KEYS = ["format", "seed", "players", "hands", "winner", "finalScores"]
HAND_KEYS = ["number", "dealer", "deal", "bids", "exchanges", "tricks", "result"]
TRICK_KEYS = ["leader", "plays", "winner"]
RESULT_KEYS = ["target", "tricks", "points", "bags", "bagPenalty", "scoreAfter", "bagsAfter"]
RANK_ORDER = {r: i for i, r in enumerate(["2", "3", "4", "5", "6", "7", "8", "9", "10"])}
RANK_ORDER.update({"J": 9, "Q": 10, "K": 11, "A": 12})

BASIC_SEED = 7
# A random-policy game with BLIND_NIL bids (and so exchanges) in hands 3 and 4.
BLIND_NIL_SEED = 4


# ----------------------------------------------------------------------------- helpers


@cache
def _played(seed: int, policy: PolicyName) -> str:
    game, _ = play_game(seed, policy)
    return json.dumps(export_record(game))


def played(seed: int = BASIC_SEED, policy: PolicyName = PolicyName.BASIC) -> Record:
    """The exported record of a bot game (a fresh copy: tests may tamper with it)."""
    record: Record = json.loads(_played(seed, policy))
    return record


def drive(game: Game, rng: random.Random, policy: PolicyName, moves: int | None = None) -> None:
    """Let bots of `policy` make `moves` moves (all of them until the game is over)."""
    choose = POLICIES[policy]
    while game.phase is not Phase.GAME_OVER and moves != 0:
        seat = game.turn
        assert seat is not None
        game.apply(choose(game, seat, rng))
        moves = None if moves is None else moves - 1


def unseeded_record() -> Record:
    game, _ = Game.start([s.bot_id for s in SEATS])
    drive(game, random.Random(3), PolicyName.BASIC)
    return export_record(game)


def replaced_game() -> Game:
    """Humans at first; EAST becomes a bot in hand 1, SOUTH a bot in hand 2."""
    game, _ = Game.start(HUMANS, seed=11)
    rng = random.Random(11)
    drive(game, rng, PolicyName.BASIC, 10)  # bids done, six cards into hand 1
    game.apply(ReplacePlayer(Seat.EAST, "bot:east"))
    while game.hand.number == 1:
        drive(game, rng, PolicyName.BASIC, 1)
    drive(game, rng, PolicyName.BASIC, 3)  # hand 2: three bids placed
    game.apply(ReplacePlayer(Seat.SOUTH, "bot:south"))
    drive(game, rng, PolicyName.BASIC)
    return game


def rank_value(code: str) -> int:
    return RANK_ORDER[code[:-1]]


def expected_winner(plays: list[dict[str, str]]) -> str:
    """The rulebook's trick winner: highest spade, else highest card of the led suit."""
    led = plays[0]["card"][-1]
    trump = [p for p in plays if p["card"][-1] == "S"]
    candidates = trump or [p for p in plays if p["card"][-1] == led]
    return max(candidates, key=lambda p: rank_value(p["card"]))["seat"]


def holdings(record: Record, hand_index: int, trick_index: int) -> dict[str, set[str]]:
    """Each seat's cards at the start of a trick of a hand without exchange."""
    hand = record["hands"][hand_index]
    assert hand["exchanges"] == []
    held = {seat: set(cards) for seat, cards in hand["deal"].items()}
    for trick in hand["tricks"][:trick_index]:
        for play in trick["plays"]:
            held[play["seat"]].remove(play["card"])
    return held


def assert_replays(record: Record) -> None:
    """The record replays and exports back to itself, also after a JSON round trip."""
    before = copy.deepcopy(record)
    assert export_record(replay_record(record)) == record
    assert record == before  # replay leaves the record alone
    as_json = json.loads(json.dumps(record))
    assert export_record(replay_record(as_json)) == record


def check_card_list(cards: list[str]) -> None:
    assert all(isinstance(c, str) and CARD_CODE.match(c) for c in cards), cards


def check_bid(value: object) -> None:
    if isinstance(value, str):
        assert value in ("NIL", "BLIND_NIL")
    else:
        assert type(value) is int and 0 <= value <= 13


def check_record_shape(record: Record, *, seeded: bool, over: bool = True) -> None:
    """Everything docs/record.md says about a record's shape, checked apart from the engine."""
    expected_keys = [
        k for k in RECORD_KEYS if (k != "seed" or seeded) and (k not in RECORD_KEYS[4:] or over)
    ]
    assert list(record) == expected_keys
    assert record["format"] == "spades-record/1" == FORMAT
    if seeded:
        assert type(record["seed"]) is int
    assert list(record["players"]) == SEAT_NAMES
    assert all(isinstance(p, str) and p for p in record["players"].values())

    scores = dict.fromkeys(TEAM_NAMES, 0)
    bags = dict.fromkeys(TEAM_NAMES, 0)
    for index, hand in enumerate(record["hands"]):
        number = index + 1
        keys = [k for k in HAND_KEYS if k != "result" or "result" in hand]
        if "currentTrick" in hand:  # a game in progress: the trick being played
            keys.insert(keys.index("tricks") + 1, "currentTrick")
        keys += ["players"] if "players" in hand else []
        assert list(hand) == keys, number
        assert hand["number"] == number
        dealer = SEAT_NAMES[index % 4]
        assert hand["dealer"] == dealer
        first = SEAT_NAMES[(index + 1) % 4]

        deal = hand["deal"]
        assert list(deal) == SEAT_NAMES
        for cards in deal.values():
            check_card_list(cards)
            assert len(cards) == 13
            assert [c.code for c in sorted(map(Card.parse, cards), key=sort_key)] == cards
        assert len({c for cards in deal.values() for c in cards}) == 52
        if seeded:
            dealt = deal_hands(record["seed"], number)
            assert deal == {s.name: [c.code for c in dealt[s]] for s in SEATS}

        bids = hand["bids"]
        assert [list(b) for b in bids] == [["seat", "bid"]] * 4
        assert [b["seat"] for b in bids] == [SEAT_NAMES[(index + 1 + i) % 4] for i in range(4)]
        for b in bids:
            check_bid(b["bid"])
        by_seat = {b["seat"]: b["bid"] for b in bids}

        held = {seat: list(cards) for seat, cards in deal.items()}
        blind = [b["seat"] for b in bids if b["bid"] == "BLIND_NIL"]
        if blind:
            bidder = blind[0]
            partner = SEAT_NAMES[(SEAT_NAMES.index(bidder) + 2) % 4]
            exchanges = hand["exchanges"]
            assert [list(e) for e in exchanges] == [["from", "to", "cards"]] * 2
            assert [(e["from"], e["to"]) for e in exchanges] == [
                (bidder, partner),
                (partner, bidder),
            ]
            for e in exchanges:
                check_card_list(e["cards"])
                assert len(set(e["cards"])) == 2
                assert set(e["cards"]) <= set(deal[e["from"]])  # chosen before receiving
            for e in exchanges:
                for card in e["cards"]:
                    held[e["from"]].remove(card)
                    held[e["to"]].append(card)
        else:
            assert hand["exchanges"] == []

        tricks = hand["tricks"]
        won = dict.fromkeys(SEAT_NAMES, 0)
        leader = first
        for trick in tricks:
            assert list(trick) == TRICK_KEYS
            assert trick["leader"] == leader
            plays = trick["plays"]
            assert [list(p) for p in plays] == [["seat", "card"]] * 4
            start = SEAT_NAMES.index(leader)
            assert [p["seat"] for p in plays] == [SEAT_NAMES[(start + i) % 4] for i in range(4)]
            for p in plays:
                held[p["seat"]].remove(p["card"])  # every card comes from the player's hand
            assert trick["winner"] == expected_winner(plays)
            leader = trick["winner"]
            won[leader] += 1

        if "result" not in hand:
            assert not over and index == len(record["hands"]) - 1
            continue
        assert len(tricks) == 13
        assert all(not cards for cards in held.values())
        assert list(hand["result"]) == TEAM_NAMES
        for team_index, team in enumerate(TEAM_NAMES):
            result = hand["result"][team]
            assert list(result) == RESULT_KEYS
            assert all(type(v) is int for k, v in result.items() if k != "target")
            seats = [SEAT_NAMES[team_index], SEAT_NAMES[team_index + 2]]
            first_bid, second = (b["bid"] for b in bids if b["seat"] in seats)
            target = second if isinstance(second, int) else first_bid
            assert result["target"] == (target if isinstance(target, int) else None)
            assert result["tricks"] == won[seats[0]] + won[seats[1]]
            assert result["bags"] >= 0 and result["bagPenalty"] % 100 == 0
            assert result["scoreAfter"] == scores[team] + result["points"]
            assert result["bagsAfter"] == (bags[team] + result["bags"]) % 10
            assert result["bagPenalty"] == 100 * ((bags[team] + result["bags"]) // 10)
            if all(isinstance(by_seat[s], int) for s in seats):
                t = result["target"]
                made = result["tricks"] >= t
                assert result["bags"] == (result["tricks"] - t if made else 0)
                base = 10 * t if made else -10 * t
                assert result["points"] == base + result["bags"] - result["bagPenalty"]
            scores[team] = result["scoreAfter"]
            bags[team] = result["bagsAfter"]

    if over:
        assert record["finalScores"] == scores
        assert list(record["finalScores"]) == TEAM_NAMES
        ns, ew = scores["NORTH_SOUTH"], scores["EAST_WEST"]
        assert ns != ew and (max(ns, ew) >= 250 or min(ns, ew) <= -250)
        assert record["winner"] == ("NORTH_SOUTH" if ns > ew else "EAST_WEST")


# ----------------------------------------------------------------------------- export


@pytest.mark.parametrize("seed", [BASIC_SEED, 1, 2])
def test_basic_game_record_has_the_documented_shape(seed: int) -> None:
    record = played(seed)
    check_record_shape(record, seeded=True)
    assert record["seed"] == seed
    assert record["players"] == BOTS
    assert all("players" not in h for h in record["hands"])
    assert all(isinstance(b["bid"], int) for h in record["hands"] for b in h["bids"])
    assert all(h["exchanges"] == [] for h in record["hands"])


def test_record_is_plain_json() -> None:
    record = played()
    assert json.loads(json.dumps(record)) == record
    assert "10H" in {c for h in record["hands"] for cards in h["deal"].values() for c in cards}


def test_random_game_with_blind_nil_records_the_exchanges() -> None:
    record = played(BLIND_NIL_SEED, PolicyName.RANDOM)
    check_record_shape(record, seeded=True)
    exchanged = [h["number"] for h in record["hands"] if h["exchanges"]]
    blind = [
        h["number"] for h in record["hands"] if any(b["bid"] == "BLIND_NIL" for b in h["bids"])
    ]
    assert exchanged == blind == [3, 4]
    hand = record["hands"][2]
    bidder = next(b["seat"] for b in hand["bids"] if b["bid"] == "BLIND_NIL")
    partner = SEAT_NAMES[(SEAT_NAMES.index(bidder) + 2) % 4]
    first, second = hand["exchanges"]
    assert (first["from"], first["to"], second["from"], second["to"]) == (
        bidder,
        partner,
        partner,
        bidder,
    )
    # `deal` is as dealt, before the exchange.
    dealt = deal_hands(BLIND_NIL_SEED, 3)
    assert hand["deal"] == {s.name: [c.code for c in dealt[s]] for s in SEATS}


def test_random_policy_records_nil_and_blind_nil_bids() -> None:
    bids = {
        b["bid"]
        for seed in range(6)
        for h in played(seed, PolicyName.RANDOM)["hands"]
        for b in h["bids"]
    }
    assert {"NIL", "BLIND_NIL"} <= bids
    assert any(isinstance(b, int) for b in bids)


def test_seed_is_present_only_when_dealt_from_a_seed() -> None:
    record = unseeded_record()
    assert "seed" not in record
    check_record_shape(record, seeded=False)
    assert "seed" in played()


def test_game_in_progress_has_no_winner_nor_final_scores() -> None:
    game, _ = Game.start([s.bot_id for s in SEATS], seed=5)
    rng = random.Random(5)
    while game.hand.number < 2 or len(game.hand.tricks) < 2:
        drive(game, rng, PolicyName.BASIC, 1)
    drive(game, rng, PolicyName.BASIC, 1)  # and one card of the third trick
    record = export_record(game)
    assert "winner" not in record and "finalScores" not in record
    assert [h["number"] for h in record["hands"]] == [1, 2]
    assert "result" in record["hands"][0] and "result" not in record["hands"][1]
    assert len(record["hands"][1]["tricks"]) == 2
    assert record["hands"][1]["currentTrick"] == [
        {"seat": s.name, "card": c.code} for s, c in game.hand.current
    ]
    check_record_shape(record, seeded=True, over=False)


def test_hand_with_a_replaced_player_records_the_players_at_its_end() -> None:
    game = replaced_game()
    record = export_record(game)
    check_record_shape(record, seeded=True)
    assert record["players"] == dict(zip(SEAT_NAMES, HUMANS, strict=True))  # at the start
    hand1, hand2, *later = record["hands"]
    assert hand1["players"] == {
        "NORTH": "alice",
        "EAST": "bot:east",
        "SOUTH": "carol",
        "WEST": "dave",
    }
    assert hand2["players"] == {
        "NORTH": "alice",
        "EAST": "bot:east",
        "SOUTH": "bot:south",
        "WEST": "dave",
    }
    assert later and all("players" not in h for h in later)


def test_worked_example_of_record_md() -> None:
    """South's NIL made (+50), North/South make 4 (+40) with one bag (+1): 91."""
    ns = score_team(
        1, Team.NORTH_SOUTH, [Bid.number(4), NIL], [5, 0], 4, score_before=0, bags_before=0
    )
    ew = score_team(
        1, Team.EAST_WEST, [Bid.number(3), Bid.number(5)], [3, 5], 5, score_before=0, bags_before=0
    )
    stated = {
        "NORTH_SOUTH": {
            "target": 4,
            "tricks": 5,
            "points": 91,
            "bags": 1,
            "bagPenalty": 0,
            "scoreAfter": 91,
            "bagsAfter": 1,
        },
        "EAST_WEST": {
            "target": 5,
            "tricks": 8,
            "points": 53,
            "bags": 3,
            "bagPenalty": 0,
            "scoreAfter": 53,
            "bagsAfter": 3,
        },
    }
    computed = {
        r.team.name: dict(
            zip(
                RESULT_KEYS,
                [r.target, r.tricks, r.points, r.bags, r.bag_penalty, r.score_after, r.bags_after],
                strict=True,
            )
        )
        for r in (ns, ew)
    }
    assert computed == stated


# ----------------------------------------------------------------------------- replay


@pytest.mark.parametrize(
    ("seed", "policy"),
    [
        (BASIC_SEED, PolicyName.BASIC),
        (1, PolicyName.BASIC),
        (BLIND_NIL_SEED, PolicyName.RANDOM),
        (44, PolicyName.RANDOM),
        (19, PolicyName.RANDOM),
    ],
)
def test_replay_reproduces_the_record(seed: int, policy: PolicyName) -> None:
    assert_replays(played(seed, policy))


def test_replay_of_an_unseeded_game_takes_the_deals_from_the_record() -> None:
    record = unseeded_record()
    assert_replays(record)
    # The deals are not those of any seed the replay might draw: they come from the record.
    replayed = replay_record(record)
    assert not replayed.seed_public
    assert [f.state.deal for f in replayed.finished] == [
        f.state.deal for f in replay_record(record).finished
    ]


def test_replay_of_replaced_players() -> None:
    game = replaced_game()
    record = export_record(game)
    replayed = replay_record(record)
    assert export_record(replayed) == record
    assert replayed.players == ["alice", "bot:east", "bot:south", "dave"]


@pytest.mark.parametrize("moves", [0, 3, 4 + 6, 4 + 52, 4 + 52 + 4 + 9])
def test_replay_of_a_game_in_progress(moves: int) -> None:
    game, _ = Game.start([s.bot_id for s in SEATS], seed=5)
    drive(game, random.Random(5), PolicyName.BASIC, moves)
    record = export_record(game)
    replayed = replay_record(record)
    assert export_record(replayed) == record
    assert replayed.phase is game.phase and replayed.turn is game.turn
    assert replayed.hand.hands == game.hand.hands


def test_replay_of_a_game_in_progress_mid_exchange() -> None:
    game, _ = Game.start([s.bot_id for s in SEATS], seed=BLIND_NIL_SEED)
    rng = random.Random(BLIND_NIL_SEED)
    while not game.hand.exchanges:
        drive(game, rng, PolicyName.RANDOM, 1)
    assert game.phase is Phase.EXCHANGE
    record = export_record(game)
    assert len(record["hands"][-1]["exchanges"]) == 1
    assert export_record(replay_record(record)) == record


# ----------------------------------------------------------------------------- refusals


def refused(record: Any, *patterns: str) -> str:
    """Replay `record`, expect a ReplayError whose message matches every pattern."""
    with pytest.raises(ReplayError) as info:
        replay_record(record)
    message = str(info.value)
    for pattern in patterns:
        assert re.search(pattern, message), (pattern, message)
    return message


def test_card_not_in_the_players_hand() -> None:
    record = played()
    held = holdings(record, 1, 2)
    play = record["hands"][1]["tricks"][2]["plays"][1]
    other = next(iter(held[SEAT_NAMES[(SEAT_NAMES.index(play["seat"]) + 1) % 4]]))
    play["card"] = other
    refused(record, r"^hand 2, trick 3: ", "CARD_NOT_IN_HAND", other)


def test_illegal_play_is_named_with_its_hand_and_trick() -> None:
    record = played()
    # Find a play that followed suit while the player still held another suit.
    for h, hand in enumerate(record["hands"]):
        for t, trick in enumerate(hand["tricks"]):
            led = trick["plays"][0]["card"][-1]
            held = holdings(record, h, t)
            for play in trick["plays"][1:]:
                others = sorted(c for c in held[play["seat"]] if c[-1] != led)
                if play["card"][-1] == led and others:
                    play["card"] = others[0]
                    refused(record, rf"^hand {h + 1}, trick {t + 1}: ", "ILLEGAL_PLAY", "follow")
                    return
    pytest.fail("no suitable play found")


def test_card_played_twice() -> None:
    record = played()
    tricks = record["hands"][0]["tricks"]
    seat = tricks[0]["plays"][0]["seat"]
    again = next(p for p in tricks[1]["plays"] if p["seat"] == seat)
    again["card"] = tricks[0]["plays"][0]["card"]
    refused(record, r"^hand 1, trick 2: ", "not in your hand")


def test_wrong_trick_winner() -> None:
    record = played()
    trick = record["hands"][0]["tricks"][4]
    actual = trick["winner"]
    trick["winner"] = next(s for s in SEAT_NAMES if s != actual)
    refused(record, r"^hand 1, trick 5: winner is " + actual + ", record says " + trick["winner"])


def test_wrong_trick_leader() -> None:
    record = played()
    trick = record["hands"][0]["tricks"][0]
    trick["leader"] = "NORTH"  # EAST leads the first trick of hand 1
    refused(record, r"^hand 1, trick 1: leader should be EAST")


@pytest.mark.parametrize("key", RESULT_KEYS)
def test_wrong_result(key: str) -> None:
    record = played()
    result = record["hands"][1]["result"]["EAST_WEST"]
    result[key] = (result[key] or 0) + 1
    refused(record, r"^hand 2, result: EAST_WEST result ")


def test_changed_bid_is_caught_by_the_result() -> None:
    record = played()
    bid = record["hands"][0]["bids"][3]
    bid["bid"] = (bid["bid"] + 1) % 14
    refused(record, r"^hand 1, result: ")


def test_missing_result_of_a_full_hand() -> None:
    record = played()
    del record["hands"][0]["result"]
    refused(record, r"^hand 1: a hand of 13 tricks needs a result")


def test_wrong_final_scores() -> None:
    record = played()
    record["finalScores"]["NORTH_SOUTH"] += 10
    refused(record, r"^end: final scores are ")


def test_wrong_winner() -> None:
    record = played()
    actual = record["winner"]
    record["winner"] = "EAST_WEST" if actual == "NORTH_SOUTH" else "NORTH_SOUTH"
    refused(record, rf"^end: winner is {actual}, record says {record['winner']}")


def test_missing_winner() -> None:
    record = played()
    del record["winner"]
    refused(record, r"^end: winner is \w+, record says None")


def test_truncated_game_claiming_a_winner() -> None:
    record = played()
    record["hands"].pop()
    refused(record, r"^end: winner is None, record says ")


def test_hand_after_the_game_was_over() -> None:
    record = played()
    extra = copy.deepcopy(record["hands"][-1])
    extra["number"] += 1
    record["hands"].append(extra)
    refused(record, rf"^hand {extra['number']}: the game was already over")


def test_deal_differing_from_the_seed() -> None:
    record = played()
    deal = record["hands"][1]["deal"]
    deal["NORTH"][0], deal["EAST"][0] = deal["EAST"][0], deal["NORTH"][0]
    refused(record, r"^hand 2: the deal differs from the seed's deal")


def test_wrong_dealer() -> None:
    record = played()
    record["hands"][1]["dealer"] = "NORTH"
    refused(record, r"^hand 2: expected hand 2 dealt by EAST")


def test_unseeded_deal_that_is_not_a_deck() -> None:
    record = unseeded_record()
    deal = record["hands"][1]["deal"]
    deal["NORTH"][0] = deal["EAST"][0]
    refused(record, r"^hand 2: a deal is 13 different cards to each seat")


def test_exchange_to_someone_not_the_partner() -> None:
    record = played(BLIND_NIL_SEED, PolicyName.RANDOM)
    exchange = record["hands"][2]["exchanges"][0]
    exchange["to"] = SEAT_NAMES[(SEAT_NAMES.index(exchange["from"]) + 1) % 4]
    refused(record, r"^hand 3, exchange 1: cards may only be passed to the partner")


def test_exchange_of_a_card_not_held() -> None:
    record = played(BLIND_NIL_SEED, PolicyName.RANDOM)
    hand = record["hands"][2]
    exchange = hand["exchanges"][0]
    foreign = next(c for c in hand["deal"][exchange["to"]])
    exchange["cards"][0] = foreign
    refused(record, r"^hand 3, exchange 1: ", "CARD_NOT_IN_HAND")


MALFORMATIONS: list[tuple[str, Callable[[Record], object], str]] = [
    (
        "wrong format",
        lambda r: r.update(format="spades-record/2"),
        r"^not a spades-record/1 record",
    ),
    ("no format", lambda r: r.pop("format"), r"^not a spades-record/1 record"),
    ("no hands", lambda r: r.pop("hands"), r"^start: malformed record: KeyError: 'hands'"),
    ("hands not a list", lambda r: r.update(hands={}), r"^hands must be a list"),
    ("no players", lambda r: r.pop("players"), r"^start: malformed record: KeyError"),
    ("string seed", lambda r: r.update(seed="7"), r"^seed must be an integer"),
    ("boolean seed", lambda r: r.update(seed=True), r"^seed must be an integer"),
    ("no tricks", lambda r: r["hands"][1].pop("tricks"), r"^hand 2.*KeyError: 'tricks'"),
    ("no bids", lambda r: r["hands"][0].pop("bids"), r"^hand 1.*KeyError: 'bids'"),
    ("no deal", lambda r: r["hands"][2].pop("deal"), r"^hand 3.*KeyError: 'deal'"),
    (
        "bad card",
        lambda r: r["hands"][1]["tricks"][2]["plays"][1].update(card="1X"),
        r"^hand 2, trick 3: malformed record: ValueError: not a card: '1X'",
    ),
    (
        "bad seat",
        lambda r: r["hands"][0]["tricks"][3]["plays"][0].update(seat="NORTHEAST"),
        r"^hand 1, trick 4: malformed record: KeyError: 'NORTHEAST'",
    ),
    (
        "bad bid word",
        lambda r: r["hands"][0]["bids"][0].update(bid="PASS"),
        r"^hand 1, bid 1: malformed record: .*not a bid: 'PASS'",
    ),
    (
        "bid too high",
        lambda r: r["hands"][1]["bids"][2].update(bid=14),
        r"^hand 2, bid 3: malformed record: .*0\.\.13",
    ),
    (
        "boolean bid",
        lambda r: r["hands"][0]["bids"][1].update(bid=True),
        r"^hand 1, bid 2: malformed record: .*not a bid",
    ),
    (
        "three plays",
        lambda r: r["hands"][0]["tricks"][6]["plays"].pop(),
        r"^hand 1, trick 7: a trick has four plays",
    ),
    (
        "short deal",
        lambda r: r["hands"][0]["deal"]["WEST"].pop(),
        r"^hand 1: a deal is 13 different cards",
    ),
]


@pytest.mark.parametrize(
    ("tamper", "pattern"), [m[1:] for m in MALFORMATIONS], ids=[m[0] for m in MALFORMATIONS]
)
def test_malformed_record(tamper: Callable[[Record], object], pattern: str) -> None:
    record = played()
    tamper(record)
    refused(record, pattern)


@pytest.mark.parametrize("value", [None, [], "spades-record/1", 42])
def test_not_a_record_at_all(value: Any) -> None:
    refused(value, r"^not a spades-record/1 record")


def test_replay_error_is_a_value_error() -> None:
    assert issubclass(ReplayError, ValueError)
