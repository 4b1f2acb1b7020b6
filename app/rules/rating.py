"""Ratings: the OpenSkill (Weng-Lin, Plackett-Luce) model of the `openskill` package, for
a two-team match, and the 1500-based scale players see.

A skill is a belief `mu` +/- `sigma` (OpenSkill's defaults: 25 +/- 25/3). Players see

    value     = round(1500 + 42 * (mu - 25))
    deviation = round(42 * sigma)

so a new player shows 1500 +/- 350 (the familiar Elo/Glicko starting point); 42 is
350 / (25/3). A rating is provisional until 10 rated games.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from openskill.models import PlackettLuce

BASE = 1500
SCALE = 42
DEFAULT_MU = 25.0
DEFAULT_SIGMA = 25.0 / 3.0
PROVISIONAL_GAMES = 10

_MODEL = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)


@dataclass(frozen=True, slots=True)
class Skill:
    """One player's rating: the model's belief and how many rated games shaped it."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    games: int = 0

    @property
    def value(self) -> int:
        """The shown rating."""
        return shown_value(self.mu)

    @property
    def deviation(self) -> int:
        """The shown uncertainty."""
        return shown_deviation(self.sigma)

    @property
    def provisional(self) -> bool:
        """Fewer than 10 rated games."""
        return self.games < PROVISIONAL_GAMES


NEW_PLAYER = Skill()


def shown_value(mu: float) -> int:
    """`mu` on the 1500-based scale."""
    return round(BASE + SCALE * (mu - DEFAULT_MU))


def shown_deviation(sigma: float) -> int:
    """`sigma` on the 1500-based scale."""
    return round(SCALE * sigma)


def rate_match(
    winners: Sequence[Skill], losers: Sequence[Skill]
) -> tuple[list[Skill], list[Skill]]:
    """The skills after `winners` beat `losers`, each player's game count one up.

    Either side may hold any number of players; an empty side (every human of the
    winning team abandoned, the bots finished the game) is played by two new-player
    ratings, which are not returned. The model's part is kept for the latest matches
    (`_rated_beliefs`): a game's end rated ahead for both results finds it done."""
    won, lost = _rated_beliefs(_beliefs(winners), _beliefs(losers))
    return _counted(won, winners), _counted(lost, losers)


Beliefs = tuple[tuple[float, float], ...]  # (mu, sigma) of each player of a team


def _beliefs(team: Sequence[Skill]) -> Beliefs:
    return tuple((s.mu, s.sigma) for s in team)


def _counted(beliefs: Beliefs, team: Sequence[Skill]) -> list[Skill]:
    return [Skill(mu, sigma, s.games + 1) for (mu, sigma), s in zip(beliefs, team, strict=True)]


@lru_cache(maxsize=4096)
def _rated_beliefs(winners: Beliefs, losers: Beliefs) -> tuple[Beliefs, Beliefs]:
    """OpenSkill's update of a two-team match (a pure function of the beliefs: kept)."""
    phantom = _beliefs([NEW_PLAYER, NEW_PLAYER])
    teams = [winners or phantom, losers or phantom]
    rated = _MODEL.rate(
        [[_MODEL.rating(mu=mu, sigma=sigma) for mu, sigma in team] for team in teams],
        ranks=[0, 1],
    )
    won, lost = (tuple((r.mu, r.sigma) for r in team) for team in rated)
    return (won if winners else ()), (lost if losers else ())
