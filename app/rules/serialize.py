"""A game's full state to and from plain JSON data, for snapshots in the store.

Unlike a record (which is public once a game is over), a snapshot holds the
secret seed and every hidden card; it never leaves the server.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from app.compact_json import dumps
from app.rules.bidding import Bid
from app.rules.cards import FULL_DECK, Card
from app.rules.game import Deal, Exchange, FinishedHand, Game, HandState, Phase, Trick
from app.rules.scoring import TeamHandResult
from app.rules.seats import Seat, Team

Data = dict[str, Any]
T = TypeVar("T")
_FINISHED_JSON_MAX = 8192  # finished hands whose JSON (and decoding) is kept


def game_to_data(game: Game, with_finished: bool = True) -> Data:
    """Everything needed to resume `game` exactly (`with_finished=False` leaves out the
    finished hands, for `game_to_json`)."""
    data = _head_to_data(game)
    data["hand"] = _hand_to_data(game.hand)  # last but the finished hands: see game_to_json
    if with_finished:
        data["finished"] = [_finished_to_data(f) for f in game.finished]
    return data


def _head_to_data(game: Game) -> Data:
    return {
        "seed": game.seed,
        "seedPublic": game.seed_public,
        "players": list(game.players),
        "startPlayers": list(game.start_players),
        "phase": game.phase._value_,  # not `.value`: a property, two calls
        "scores": list(game.scores),
        "bags": list(game.bags),
        "winner": game.winner.name if game.winner is not None else None,
        "forcedDeals": (
            {str(n): _deal_to_data(d) for n, d in game.forced_deals.items()}
            if game.forced_deals is not None
            else None
        ),
    }


def game_to_json(game: Game) -> str:
    """`game_to_data` as compact JSON, reusing the JSON of what no move changes again: the
    hands already finished, the deal and the finished tricks of the hand in play. A
    snapshot after every move then costs about the same early and late in a game."""
    # The order is game_to_data's: the head and its hand, then the finished hands.
    return "".join((head_json(game)[:-1], ',"finished":[', _all_finished_json(game.finished), "]}"))


def head_json(game: Game) -> str:
    """`game_to_data(game, with_finished=False)` as compact JSON, from the same reused
    pieces as `game_to_json` (the hand's deal and finished tricks last)."""
    hand = game.hand
    return "".join(
        (
            dumps(_head_to_data(game))[:-1],
            ',"hand":',
            dumps(_changing_hand_data(hand))[:-1],
            ',"deal":',
            _deal_json(hand.deal),
            ',"tricks":[',
            _all_tricks_json(hand.tricks),
            "]}}",
        )
    )


def game_parts_json(game: Game) -> str:
    """The game for another process: `{"head": <head_json>, "finished": [<each finished
    hand's JSON, as a string>]}`, which it decodes with `game_from_parts` and
    `finished_from_json` (each finished hand once per distinct text)."""
    return "".join(
        ('{"head":', head_json(game), ',"finished":[', _all_quoted_finished(game.finished), "]}")
    )


class _TextOf(Generic[T]):
    """The JSON text of immutable objects, each made once and found by identity (an entry
    holds its object, so an id is never reused while cached); bounded, oldest dropped."""

    __slots__ = ("_make", "_most", "_texts")

    def __init__(self, make: Callable[[T], str], most: int) -> None:
        self._make = make
        self._most = most
        self._texts: dict[int, tuple[T, str]] = {}

    def __call__(self, item: T) -> str:
        entry = self._texts.get(id(item))
        if entry is not None and entry[0] is item:
            return entry[1]
        text = self._make(item)
        _remember(self._texts, self._most, id(item), (item, text))
        return text


class _JoinedText(Generic[T]):
    """The comma-joined texts of a growing sequence of immutable items, found by its last
    item and checked item by item (by identity, in C): a move joins nothing again, and a
    sequence one item longer than a known one extends that one's text."""

    __slots__ = ("_joined", "_most", "_text_of")

    def __init__(self, text_of: Callable[[T], str], most: int) -> None:
        self._text_of = text_of
        self._most = most
        self._joined: dict[int, tuple[tuple[T, ...], str]] = {}

    def __call__(self, items: Sequence[T]) -> str:
        if not items:
            return ""
        done = tuple(items)
        joined = self._joined
        entry = joined.get(id(done[-1]))
        if entry is not None and entry[0] == done:
            return entry[1]
        last = self._text_of(done[-1])
        before = joined.get(id(done[-2])) if len(done) > 1 else None
        if before is not None and before[0] == done[:-1]:
            text = before[1] + "," + last
        else:
            text = ",".join([*map(self._text_of, done[:-1]), last])
        _remember(joined, self._most, id(done[-1]), (done, text))
        return text


def _remember(cache: dict[int, Any], most: int, key: int, entry: Any) -> None:
    if len(cache) >= most:
        del cache[next(iter(cache))]
    cache[key] = entry


# What no move changes again, turned into JSON once: finished hands (also sent between
# processes, app/services/broker_codec.py), a hand's deal, and the finished tricks and hands
# joined.
finished_json = _TextOf[FinishedHand](
    lambda finished: dumps(_finished_to_data(finished)), _FINISHED_JSON_MAX
)
_deal_json = _TextOf[Deal](lambda deal: dumps(_deal_to_data(deal)), 4096)
_all_tricks_json = _JoinedText[Trick](lambda trick: dumps(_trick_to_data(trick)), 4096)
_all_finished_json = _JoinedText[FinishedHand](finished_json, 1024)
# ...and as JSON strings (what game_parts_json sends), quoted once each.
_quoted_finished = _TextOf[FinishedHand](lambda f: dumps(finished_json(f)), _FINISHED_JSON_MAX)
_all_quoted_finished = _JoinedText[FinishedHand](_quoted_finished, 1024)


def game_from_json(text: str) -> Game:
    """The game `game_to_json` described."""
    return game_from_data(json.loads(text))


def game_from_data(data: Data) -> Game:
    """The game that `game_to_data` described."""
    return game_from_parts(data, [_finished_from_data(f) for f in data["finished"]])


# Cached by text: a process receiving the same game again and again (every event of it,
# from other processes) decodes each finished hand once.
@functools.lru_cache(maxsize=_FINISHED_JSON_MAX)
def finished_from_json(text: str) -> FinishedHand:
    """The finished hand `finished_json` described (decoded once per distinct text)."""
    return _finished_from_data(json.loads(text))


def game_from_parts(head: Data, finished: list[FinishedHand]) -> Game:
    """A game from `game_to_data(game, with_finished=False)` and its finished hands."""
    data = head  # the whole game's data but its finished hands
    forced = data.get("forcedDeals")
    hand = _hand_from_data(data["hand"])
    if finished and finished[-1].state.number == hand.number:
        hand = finished[-1].state  # a finished game's last hand is one object, as in play
    return Game(
        seed=int(data["seed"]),
        seed_public=bool(data["seedPublic"]),
        players=list(data["players"]),
        start_players=tuple(data["startPlayers"]),
        hand=hand,
        phase=Phase(data["phase"]),
        scores=list(data["scores"]),
        bags=list(data["bags"]),
        finished=finished,
        winner=Team[data["winner"]] if data["winner"] is not None else None,
        forced_deals=(
            {int(n): _deal_from_data(d) for n, d in forced.items()} if forced is not None else None
        ),
    )


# A snapshot is written after every move: plain lookups instead of the cards' `code` and
# the seats' `name` properties (two Python calls each) keep that cheap.
_CODE_OF: dict[Card, str] = {c: c.code for c in FULL_DECK}
_SEAT_NAMES: tuple[str, ...] = tuple(s.name for s in Seat)
# ...and the way back, for what this module wrote itself (a stored row, a broker
# message): one dict lookup in C per card or seat instead of `Card.parse` (which trims,
# uppercases and checks any text) and `Seat[...]` (enum lookups in Python). A text this
# module did not write raises KeyError, as a malformed one raised ValueError.
_CARD_OF: dict[str, Card] = {code: card for card, code in _CODE_OF.items()}
_SEAT_OF: dict[str, Seat] = {s.name: s for s in Seat}
_seat = _SEAT_OF.__getitem__


def _codes(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return list(map(_CODE_OF.__getitem__, cards))


def _parse(codes: list[str]) -> list[Card]:
    return list(map(_CARD_OF.__getitem__, codes))


def _deal_to_data(deal: Deal) -> list[list[str]]:
    return [_codes(h) for h in deal]


def _deal_from_data(data: list[list[str]]) -> Deal:
    return tuple(tuple(_parse(h)) for h in data)


def _plays_to_data(plays: tuple[tuple[Seat, Card], ...] | list[tuple[Seat, Card]]) -> list[Any]:
    return [[_SEAT_NAMES[s], _CODE_OF[c]] for s, c in plays]


def _plays_from_data(data: list[Any]) -> list[tuple[Seat, Card]]:
    card = _CARD_OF.__getitem__
    return [(_seat(s), card(c)) for s, c in data]


def _hand_to_data(hand: HandState) -> Data:
    data = _changing_hand_data(hand)
    # Last: what game_to_json reuses
    data["deal"] = _deal_to_data(hand.deal)
    data["tricks"] = [_trick_to_data(t) for t in hand.tricks]
    return data


def _changing_hand_data(hand: HandState) -> Data:
    """A hand's data but its deal and finished tricks (which never change)."""
    return {
        "number": hand.number,
        "dealer": _SEAT_NAMES[hand.dealer],
        "hands": [_codes(h) for h in hand.hands],
        "withheld": list(hand.withheld),
        "bids": [b.to_record() if b is not None else None for b in hand.bids],
        "bidOrder": [_SEAT_NAMES[s] for s in hand.bid_order],
        "exchanges": [[e.giver.name, e.receiver.name, _codes(e.cards)] for e in hand.exchanges],
        "current": _plays_to_data(hand.current),
        "leader": _SEAT_NAMES[hand.leader],
        "spadesBroken": hand.spades_broken,
        "tricksWon": list(hand.tricks_won),
        "playersChanged": hand.players_changed,
    }


def _trick_to_data(trick: Trick) -> list[Any]:
    return [_SEAT_NAMES[trick.leader], _plays_to_data(trick.plays), _SEAT_NAMES[trick.winner]]


def _hand_from_data(data: Data) -> HandState:
    return HandState(
        number=data["number"],
        dealer=_seat(data["dealer"]),
        deal=_deal_from_data(data["deal"]),
        hands=[_parse(h) for h in data["hands"]],
        withheld=list(data["withheld"]),
        bids=[Bid.from_record(b) if b is not None else None for b in data["bids"]],
        bid_order=list(map(_seat, data["bidOrder"])),
        exchanges=[
            Exchange(_seat(g), _seat(r), (_CARD_OF[c[0]], _CARD_OF[c[1]]))
            for g, r, c in data["exchanges"]
        ],
        tricks=[
            Trick(_seat(lead), tuple(_plays_from_data(p)), _seat(w))
            for lead, p, w in data["tricks"]
        ],
        current=_plays_from_data(data["current"]),
        leader=_seat(data["leader"]),
        spades_broken=data["spadesBroken"],
        tricks_won=list(data["tricksWon"]),
        players_changed=data["playersChanged"],
    )


def _result_to_data(r: TeamHandResult) -> list[Any]:
    return [
        r.hand_number,
        r.team.name,
        r.target,
        r.tricks,
        r.points,
        r.bags,
        r.bag_penalty,
        r.score_after,
        r.bags_after,
    ]


def _result_from_data(d: list[Any]) -> TeamHandResult:
    return TeamHandResult(d[0], Team[d[1]], d[2], d[3], d[4], d[5], d[6], d[7], d[8])


def _finished_to_data(f: FinishedHand) -> Data:
    return {
        "hand": _hand_to_data(f.state),
        "results": [_result_to_data(r) for r in f.results],
        "players": list(f.players) if f.players is not None else None,
    }


def _finished_from_data(d: Data) -> FinishedHand:
    r0, r1 = (_result_from_data(r) for r in d["results"])
    players = tuple(d["players"]) if d["players"] is not None else None
    return FinishedHand(_hand_from_data(d["hand"]), (r0, r1), players)
