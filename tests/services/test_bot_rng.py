"""Bots at a table dealt from an explicit seed make the same moves for the same game;
elsewhere their random numbers stay unpredictable."""

from __future__ import annotations

import random

from app.rules.game import Game, Phase
from app.rules.moves import Move
from app.rules.seats import Seat
from app.services.play.bots import bot_move, bot_rng
from app.services.tables.snapshot import Occupant, TableSnapshot, TableStatus
from tests.support.tables import table_snapshot


def bots_table(seed: int | None, version: int) -> TableSnapshot:
    """Four BASIC bots at the first trick's lead (the hand dealt from seed 7, bids made),
    at `version`: a position where the basic bot picks among its legal cards at random."""
    occupants = tuple(Occupant.bot(seat) for seat in Seat)
    game, _ = Game.start([o.player_id for o in occupants], seed=7)
    bids = random.Random(0)
    while game.phase is Phase.BIDDING:
        turn = game.turn
        assert turn is not None
        game.apply(bot_move(table_snapshot(occupants=occupants, game=game), turn, bids))
    return table_snapshot(
        occupants=occupants,
        game=game,
        status=TableStatus.PLAYING,
        version=version,
        deal_seed=seed,
    )


def leads(seed: int | None, version: int, rolls: int = 20) -> set[str]:
    """The opening lead decided `rolls` times, each on a fresh copy of the table."""
    moves: list[Move] = []
    for _ in range(rolls):
        table = bots_table(seed, version)
        assert table.game is not None and table.game.turn is not None
        moves.append(bot_move(table, table.game.turn, bot_rng(table, random.SystemRandom())))
    return set(map(repr, moves))


def test_a_seeded_tables_bots_repeat_their_moves_at_each_version() -> None:
    assert len(leads(seed=11, version=5)) == 1


def test_an_unseeded_tables_bots_vary() -> None:
    assert len(leads(seed=None, version=5)) > 1


def test_a_seeded_tables_bot_numbers_change_with_the_version() -> None:
    table, later = bots_table(11, 5), bots_table(11, 6)
    fallback = random.SystemRandom()
    assert bot_rng(table, fallback).random() != bot_rng(later, fallback).random()


def test_an_unseeded_table_uses_the_unpredictable_stream() -> None:
    fallback = random.SystemRandom()
    assert bot_rng(bots_table(None, 5), fallback) is fallback
