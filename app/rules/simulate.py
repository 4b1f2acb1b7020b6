"""Bot-vs-bot games for the `spades simulate` command and the benchmarks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from app.rules.bidding import BidKind
from app.rules.bots import POLICIES, PolicyName
from app.rules.game import Game, Phase
from app.rules.seats import SEATS, Team

MAX_HANDS = 1000  # a guard: random play can wander, but a game must end


@dataclass
class SimulationStats:
    """Totals over simulated games."""

    games: int = 0
    hands: int = 0
    moves: int = 0
    wins: dict[Team, int] = field(default_factory=lambda: {t: 0 for t in Team})
    nil_bids: int = 0
    blind_nil_bids: int = 0

    def add(self, game: Game, moves: int) -> None:
        """Count one finished game."""
        self.games += 1
        self.moves += moves
        self.hands += len(game.finished)
        if game.winner is not None:
            self.wins[game.winner] += 1
        for finished in game.finished:
            for bid in finished.state.bids:
                if bid is not None and bid.kind is BidKind.NIL:
                    self.nil_bids += 1
                elif bid is not None and bid.kind is BidKind.BLIND_NIL:
                    self.blind_nil_bids += 1


def play_game(seed: int, policy: PolicyName = PolicyName.BASIC) -> tuple[Game, int]:
    """One full game between four bots, dealt and played from `seed`; returns it and its
    move count."""
    rng = random.Random(seed)
    choose = POLICIES[policy]
    game, _ = Game.start([s.bot_id for s in SEATS], seed=seed)
    moves = 0
    over = Phase.GAME_OVER  # a local: enum member lookups are slow on Python 3.11
    while game.phase is not over:
        if game.hand.number > MAX_HANDS:
            raise RuntimeError(f"game {seed} did not end in {MAX_HANDS} hands")
        seat = game.turn
        assert seat is not None
        game.apply(choose(game, seat, rng))
        moves += 1
    return game, moves


def game_seeds(games: int, seed: int | None) -> Iterator[int]:
    """The seeds of `games` games: derived from `seed`, or fresh when it is None."""
    master = random.Random(seed) if seed is not None else random.SystemRandom()
    for _ in range(games):
        yield master.getrandbits(63)
