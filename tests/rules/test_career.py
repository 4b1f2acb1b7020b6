"""Career lines and ratings, pure: who played which hand, whose bid a bid is, abandoned
players, and the direction of rating changes."""

from __future__ import annotations

import random

from app.rules.bidding import BidKind
from app.rules.bots import POLICIES, PolicyName
from app.rules.career import career_lines, seating_from_moves, seats_changed
from app.rules.game import Game, Phase
from app.rules.moves import Move, PlaceBid, ReplacePlayer
from app.rules.rating import NEW_PLAYER, Skill, rate_match, shown_deviation, shown_value
from app.rules.seats import Seat

PLAYERS = ["ann", "bob", "cat", "dan"]


def play(seed: int, replace_at: int | None = None, by: str = "bot:east") -> tuple[Game, list[Move]]:
    """A bot-played game of the four players; at move `replace_at`, EAST is replaced."""
    rng = random.Random(seed)
    choose = POLICIES[PolicyName.BASIC]
    game, _ = Game.start(PLAYERS, seed=seed)
    moves: list[Move] = []
    while game.phase is not Phase.GAME_OVER:
        if replace_at is not None and len(moves) == replace_at:
            moves.append(ReplacePlayer(Seat.EAST, by))
            game.apply(moves[-1])
            continue
        seat = game.turn
        assert seat is not None
        moves.append(choose(game, seat, rng))
        game.apply(moves[-1])
    return game, moves


def test_without_seat_changes_everyone_played_every_hand_and_the_winners_won() -> None:
    game, _ = play(1)
    assert not seats_changed(game)
    lines = {line.player_id: line for line in career_lines(game)}
    assert set(lines) == set(PLAYERS)
    for line in lines.values():
        assert line.hands == len(game.finished)
        assert line.contracts_made + line.contracts_set <= line.hands
        assert line.won is (line.team is game.winner) and not line.abandoned
    assert lines["ann"].partner_id == "cat" and set(lines["ann"].opponent_ids) == {"bob", "dan"}


def test_a_replaced_player_abandoned_and_counts_only_the_hands_they_held() -> None:
    game, moves = play(2, replace_at=30)  # during hand 1 (its bids and a few tricks done)
    assert seats_changed(game)
    lines = {
        line.player_id: line for line in career_lines(game, seating_from_moves(PLAYERS, moves))
    }
    assert "bot:east" not in lines
    bob = lines["bob"]
    assert bob.abandoned and not bob.won and bob.hands == 1
    bid = game.finished[0].state.bids[Seat.EAST]
    assert bid is not None
    assert bob.nil_bids == (bid.kind is BidKind.NIL)
    assert lines["dan"].hands == len(game.finished) and lines["dan"].partner_id == "bob"


def test_a_bid_belongs_to_whoever_held_the_seat_when_it_was_placed() -> None:
    game, moves = play(3, replace_at=0, by="eve")  # EAST changes hands before any bid
    seating = seating_from_moves(PLAYERS, moves)
    assert seating[0].holders[Seat.EAST] == ("bob", "eve")
    assert seating[0].bidders[Seat.EAST] == "eve"
    assert all(h.holders[Seat.EAST] == ("eve",) for h in seating[1:])
    lines = {line.player_id: line for line in career_lines(game, seating)}
    assert lines["bob"].hands == 1 and lines["bob"].nil_bids == 0
    assert lines["bob"].blind_nil_bids == 0 and lines["bob"].abandoned
    eve_bids = [f.state.bids[Seat.EAST] for f in game.finished]
    nils = sum(1 for b in eve_bids if b is not None and b.kind is BidKind.NIL)
    assert lines["eve"].nil_bids == nils and lines["eve"].hands == len(game.finished)
    assert sum(isinstance(m, PlaceBid) for m in moves) == 4 * len(game.finished)


def test_winners_go_up_losers_go_down_and_uncertainty_shrinks() -> None:
    won, lost = rate_match([NEW_PLAYER, NEW_PLAYER], [NEW_PLAYER, NEW_PLAYER])
    assert all(s.value > 1500 and s.games == 1 for s in won)
    assert all(s.value < 1500 and s.games == 1 for s in lost)
    assert all(s.deviation < 350 for s in won + lost)
    assert NEW_PLAYER.value == 1500 and NEW_PLAYER.deviation == 350 and NEW_PLAYER.provisional
    assert shown_value(25 + 1) == 1542 and shown_deviation(1) == 42


def test_beating_stronger_players_gains_more_and_an_empty_side_is_two_new_players() -> None:
    strong = Skill(30.0, 3.0, 40)
    weak = Skill(20.0, 3.0, 40)
    upset, _ = rate_match([weak, weak], [strong, strong])
    expected, _ = rate_match([strong, strong], [weak, weak])
    assert upset[0].mu - weak.mu > expected[0].mu - strong.mu
    none, lost = rate_match([], [weak, weak, Skill(games=9)])
    assert none == [] and len(lost) == 3 and all(s.mu < 25 for s in lost[2:])
    assert not Skill(games=10).provisional and Skill(games=9).provisional
