"""Snapshots: the JSON form reuses the JSON of finished hands, the deal and finished tricks,
yet always equals the full data."""

from __future__ import annotations

import json
import random

from app.rules.bots import random_move
from app.rules.game import Game, Phase
from app.rules.seats import SEATS
from app.rules.serialize import game_from_json, game_to_data, game_to_json


def test_snapshot_json_equals_the_full_data_after_every_move_and_resumes_exactly() -> None:
    rng = random.Random(7)
    game, _ = Game.start([s.bot_id for s in SEATS], seed=7)
    moves = 0
    while game.phase is not Phase.GAME_OVER and moves < 3000:
        text = game_to_json(game)
        assert text == json.dumps(game_to_data(game), separators=(",", ":"))
        resumed = game_from_json(text)
        assert game_to_data(resumed) == game_to_data(game)
        assert game_to_json(resumed) == text  # its tricks and deal new objects: none reused
        seat = game.turn
        assert seat is not None
        game.apply(random_move(game, seat, rng))
        moves += 1
    assert game.finished, "the game should have finished hands to reuse"
    assert json.loads(game_to_json(game)) == json.loads(json.dumps(game_to_data(game)))
