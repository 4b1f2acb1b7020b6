"""Game records (`spades-record/1`): export any game, replay a record through the engine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.rules.bidding import Bid, BidKind
from app.rules.cards import Card, sort_hand
from app.rules.errors import RuleError
from app.rules.game import Deal, FinishedHand, Game, HandState, Phase
from app.rules.levels import BotLevel
from app.rules.moves import Move, PassCards, PlaceBid, PlayCard, ReplacePlayer, RevealHand
from app.rules.scoring import TeamHandResult
from app.rules.seats import SEATS, TEAMS, Seat

FORMAT = "spades-record/1"
Record = dict[str, Any]


class ReplayError(ValueError):
    """A record that does not replay: malformed, an illegal move, or a wrong result."""


# ----------------------------------------------------------------------------- export


def export_record(game: Game, bot_levels: Mapping[Seat, BotLevel] | None = None) -> Record:
    """The record of `game`: its finished hands, and the hand in progress if any.

    `bot_levels` (optional) names the level of each seat a bot held when the game
    started; it is written as `botLevels`."""
    record: Record = {"format": FORMAT}
    if game.seed_public:
        record["seed"] = game.seed
    record["players"] = _seat_map(game.start_players)
    if bot_levels:
        record["botLevels"] = {s.name: bot_levels[s].value for s in SEATS if s in bot_levels}
    hands = [_hand_record(f.state, f.results, f.players) for f in game.finished]
    if game.phase is not Phase.GAME_OVER and game.hand.number > len(game.finished):
        players = tuple(game.players) if game.hand.players_changed else None
        hands.append(_hand_record(game.hand, None, players))
    record["hands"] = hands
    if game.winner is not None:
        record["winner"] = game.winner.name
        record["finalScores"] = {t.name: game.scores[t] for t in TEAMS}
    return record


def _seat_map(players: tuple[str, ...] | list[str]) -> dict[str, str]:
    return {s.name: players[s] for s in SEATS}


def _cards(cards: tuple[Card, ...] | list[Card]) -> list[str]:
    return [c.code for c in cards]


def _hand_record(
    hand: HandState,
    results: tuple[TeamHandResult, TeamHandResult] | None,
    players: tuple[str, ...] | None,
) -> Record:
    out: Record = {
        "number": hand.number,
        "dealer": hand.dealer.name,
        "deal": {s.name: _cards(hand.deal[s]) for s in SEATS},
        "bids": [
            {"seat": s.name, "bid": bid.to_record()}
            for s in hand.bid_order
            if (bid := hand.bids[s]) is not None
        ],
        "exchanges": [
            {"from": e.giver.name, "to": e.receiver.name, "cards": _cards(e.cards)}
            for e in hand.exchanges
        ],
        "tricks": [
            {
                "leader": t.leader.name,
                "plays": [{"seat": s.name, "card": c.code} for s, c in t.plays],
                "winner": t.winner.name,
            }
            for t in hand.tricks
        ],
    }
    if hand.current:
        out["currentTrick"] = [{"seat": s.name, "card": c.code} for s, c in hand.current]
    if results is not None:
        out["result"] = {r.team.name: _result_record(r) for r in results}
    if players is not None:
        out["players"] = _seat_map(players)
    return out


def _result_record(r: TeamHandResult) -> Record:
    return {
        "target": r.target,
        "tricks": r.tricks,
        "points": r.points,
        "bags": r.bags,
        "bagPenalty": r.bag_penalty,
        "scoreAfter": r.score_after,
        "bagsAfter": r.bags_after,
    }


# ----------------------------------------------------------------------------- replay


def replay_record(record: Mapping[str, Any]) -> Game:
    """Replay `record` through the rules engine and check every result it states.

    Returns the replayed game; raises ReplayError naming the first bad move or result.
    """
    replayer = _Replayer(record)
    try:
        return replayer.run()
    except ReplayError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RuleError) as exc:
        # RuleError: a malformed bid value (Bid.from_record) is refused outside any move.
        raise replayer._fail(f"malformed record: {type(exc).__name__}: {exc}") from exc


class _Replayer:
    def __init__(self, record: Mapping[str, Any]) -> None:
        if not isinstance(record, Mapping) or record.get("format") != FORMAT:
            raise ReplayError(f"not a {FORMAT} record")
        self.record = record
        self.where = "start"
        self.number = 0

    def run(self) -> Game:
        record = self.record
        hands = record["hands"]
        if not isinstance(hands, list):
            raise ReplayError("hands must be a list")
        seed = record.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ReplayError("seed must be an integer")
        deals: dict[int, Deal] | None = None
        if seed is None:  # an unseeded game: the deals come from the record
            deals = {}
            for h in hands:
                self.where = f"hand {h['number']}"
                deals[h["number"]] = self._parse_deal(h["deal"])
            self.where = "start"
        players = [str(record["players"][s.name]) for s in SEATS]
        self._check_bot_levels(record.get("botLevels"), players)
        game, _ = Game.start(players, seed=seed, forced_deals=deals)
        for hand_record in hands:
            self._replay_hand(game, hand_record)
        self._check_end(game)
        return game

    def _check_bot_levels(self, levels: object, players: list[str]) -> None:
        """`botLevels`, when present, maps seats a bot held at the start to a level."""
        if levels is None:
            return
        if not isinstance(levels, Mapping):
            raise self._fail("botLevels must map seats to levels")
        for name, level in levels.items():
            seat = Seat[name]
            if level not in BotLevel.__members__:
                raise self._fail(f"botLevels: {level!r} is not a bot level")
            if not players[seat].startswith("bot:"):
                raise self._fail(f"botLevels: {name} was not held by a bot at the start")

    def _fail(self, message: str) -> ReplayError:
        return ReplayError(f"{self.where}: {message}")

    def _parse_deal(self, deal: Mapping[str, list[str]]) -> Deal:
        hands = tuple(tuple(sort_hand([Card.parse(c) for c in deal[s.name]])) for s in SEATS)
        cards = [c for h in hands for c in h]
        if any(len(h) != 13 for h in hands) or len(set(cards)) != 52:
            raise self._fail("a deal is 13 different cards to each seat, 52 in all")
        return hands

    def _apply(self, game: Game, move: Move) -> None:
        try:
            game.apply(move)
        except RuleError as exc:
            raise self._fail(f"{move} refused: {exc.code.value}: {exc.message}") from exc

    def _replay_hand(self, game: Game, rec: Mapping[str, Any]) -> None:
        number = rec["number"]
        self.number = number
        self.where = f"hand {number}"
        hand = game.hand
        if game.phase is Phase.GAME_OVER:
            raise self._fail("the game was already over")
        if number != hand.number or Seat[rec["dealer"]] is not hand.dealer:
            raise self._fail(f"expected hand {hand.number} dealt by {hand.dealer.name}")
        if self._parse_deal(rec["deal"]) != hand.deal:
            raise self._fail("the deal differs from the seed's deal")
        for seat_name, player in (rec.get("players") or {}).items():
            seat = Seat[seat_name]
            if game.players[seat] != player:
                self._apply(game, ReplacePlayer(seat, str(player)))
        for i, entry in enumerate(rec["bids"]):
            self.where = f"hand {number}, bid {i + 1}"
            seat, bid = Seat[entry["seat"]], Bid.from_record(entry["bid"])
            if game.hand.withheld[seat] and bid.kind is not BidKind.BLIND_NIL:
                self._apply(game, RevealHand(seat))
            self._apply(game, PlaceBid.of(seat, bid))
        for i, entry in enumerate(rec["exchanges"]):
            self.where = f"hand {number}, exchange {i + 1}"
            giver = Seat[entry["from"]]
            if Seat[entry["to"]] is not giver.partner:
                raise self._fail("cards may only be passed to the partner")
            cards = tuple(Card.parse(c) for c in entry["cards"])
            self._apply(game, PassCards(giver, cards))
        for i, trick in enumerate(rec["tricks"]):
            self.where = f"hand {number}, trick {i + 1}"
            self._replay_trick(game, trick)
        self.where = f"hand {number}, trick {len(rec['tricks']) + 1}"
        for entry in rec.get("currentTrick", []):
            self._apply(game, PlayCard(Seat[entry["seat"]], Card.parse(entry["card"])))
        self.where = f"hand {number}"
        if "result" in rec:
            self._check_result(game, number, rec["result"])
        elif len(rec["tricks"]) == 13:
            raise self._fail("a hand of 13 tricks needs a result")

    def _replay_trick(self, game: Game, trick: Mapping[str, Any]) -> None:
        if Seat[trick["leader"]] is not game.turn:
            raise self._fail(f"leader should be {game.turn.name if game.turn else None}")
        plays = trick["plays"]
        if len(plays) != 4:
            raise self._fail("a trick has four plays")
        for play in plays:
            self._apply(game, PlayCard(Seat[play["seat"]], Card.parse(play["card"])))
        state = _hand_state(game, self.number)
        winner = state.tricks[-1].winner if state is not None and state.tricks else None
        if winner is None or winner.name != trick["winner"]:
            raise self._fail(
                f"winner is {winner.name if winner else None}, record says {trick['winner']}"
            )

    def _check_result(self, game: Game, number: int, result: Mapping[str, Any]) -> None:
        self.where = f"hand {number}, result"
        finished = _finished_hand(game, number)
        if finished is None:
            raise self._fail("the hand did not finish")
        for r in finished.results:
            expected = _result_record(r)
            stated = result[r.team.name]
            if stated != expected:
                raise self._fail(f"{r.team.name} result {stated} != computed {expected}")

    def _check_end(self, game: Game) -> None:
        self.where = "end"
        record = self.record
        winner = record.get("winner")
        actual = game.winner.name if game.winner is not None else None
        if winner != actual:
            raise self._fail(f"winner is {actual}, record says {winner}")
        if "finalScores" in record:
            scores = {t.name: game.scores[t] for t in TEAMS}
            if record["finalScores"] != scores:
                raise self._fail(f"final scores are {scores}, record says {record['finalScores']}")


def _hand_state(game: Game, number: int) -> HandState | None:
    if game.hand.number == number:
        return game.hand
    finished = _finished_hand(game, number)
    return finished.state if finished is not None else None


def _finished_hand(game: Game, number: int) -> FinishedHand | None:
    for finished in reversed(game.finished):
        if finished.state.number == number:
            return finished
    return None


__all__ = ["FORMAT", "ReplayError", "export_record", "replay_record"]
