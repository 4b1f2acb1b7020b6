"""A rated game's end rated ahead (`results.rate_both_results`, run while the game is
played): the final move then finds OpenSkill's update done (`rate_match` keeps it), and
what it finds is exactly what OpenSkill computes."""

from __future__ import annotations

from openskill.models import PlackettLuce

from app.rules.career import career_lines
from app.rules.rating import DEFAULT_MU, DEFAULT_SIGMA, Skill, _rated_beliefs, rate_match
from app.services.accounts.results import rate_both_results, rate_lines
from app.services.tables.snapshot import Occupant, TableStatus
from tests.store.game_ends import last_move
from tests.support.tables import table_snapshot

PLAYERS = ["ann", "bob", "cid", "dee"]
SKILLS = {
    "ann": Skill(27.5, 6.25, 4),
    "bob": Skill(22.125, 7.5, 2),
    "cid": Skill(31.0, 3.5, 30),
    "dee": Skill(19.75, 5.0, 12),
}


def test_a_kept_update_is_openskills_own() -> None:
    winners, losers = [SKILLS["ann"], SKILLS["cid"]], [SKILLS["bob"], SKILLS["dee"]]
    model = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)
    teams = [[model.rating(mu=s.mu, sigma=s.sigma) for s in t] for t in (winners, losers)]
    direct = [[(r.mu, r.sigma) for r in team] for team in model.rate(teams, ranks=[0, 1])]
    for _ in range(2):  # computed, then kept
        won, lost = rate_match(winners, losers)
        assert [[(s.mu, s.sigma) for s in team] for team in (won, lost)] == direct
        assert [s.games for s in won + lost] == [5, 31, 3, 13]


def test_the_final_move_finds_its_game_rated_ahead() -> None:
    game, move = last_move(PLAYERS, seed=3)
    table = table_snapshot(
        occupants=tuple(Occupant(p, p) for p in PLAYERS),
        status=TableStatus.PLAYING,
        game=game,
        rated=True,
    )
    _rated_beliefs.cache_clear()
    rate_both_results(table, SKILLS)  # while the game is played
    game.apply(move)
    assert game.winner is not None
    before = _rated_beliefs.cache_info()
    after = rate_lines(tuple(career_lines(game)), SKILLS)  # its final move
    now = _rated_beliefs.cache_info()
    assert (now.hits - before.hits, now.misses - before.misses) == (1, 0)
    assert after["ann"].games == 5 and sorted(after) == sorted(PLAYERS)
