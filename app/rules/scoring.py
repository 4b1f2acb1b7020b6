"""Hand scoring with nil bonuses, bags and bag penalties, and the end of the game."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.rules.bidding import Bid, BidKind
from app.rules.seats import Team

NIL_POINTS = 50
BLIND_NIL_POINTS = 100
BAG_LIMIT = 10
BAG_PENALTY = 100
WINNING_SCORE = 250
LOSING_SCORE = -250


@dataclass(frozen=True, slots=True)
class TeamHandResult:
    """One team's result of one hand (a `HandResult` of the API)."""

    hand_number: int
    team: Team
    target: int | None
    tricks: int
    points: int
    bags: int
    bag_penalty: int
    score_after: int
    bags_after: int


def nil_points(bid: Bid, tricks: int) -> int:
    """The nil bonus or penalty of one seat (0 for a numeric bid)."""
    if bid.kind is BidKind.TRICKS:
        return 0
    value = BLIND_NIL_POINTS if bid.kind is BidKind.BLIND_NIL else NIL_POINTS
    return value if tricks == 0 else -value


def score_team(
    hand_number: int,
    team: Team,
    bids: Sequence[Bid],
    tricks: Sequence[int],
    target: int | None,
    score_before: int,
    bags_before: int,
) -> TeamHandResult:
    """Score one team's hand. `bids` and `tricks` hold the team's two seats."""
    points = sum(nil_points(b, t) for b, t in zip(bids, tricks, strict=True))
    team_tricks = sum(tricks)
    if target is not None and target >= 1:
        if team_tricks >= target:
            bags = team_tricks - target
            points += 10 * target
        else:
            bags = 0
            points -= 10 * target
    else:
        bags = team_tricks
    points += bags
    bag_count = bags_before + bags
    penalty = 0
    while bag_count >= BAG_LIMIT:
        bag_count -= BAG_LIMIT
        penalty += BAG_PENALTY
    points -= penalty
    return TeamHandResult(
        hand_number=hand_number,
        team=team,
        target=target,
        tricks=team_tricks,
        points=points,
        bags=bags,
        bag_penalty=penalty,
        score_after=score_before + points,
        bags_after=bag_count,
    )


def game_winner(scores: Sequence[int]) -> Team | None:
    """The winning team after a scored hand, or None when another hand is due.

    A team at 250+ wins and a team at -250 or less loses; with both teams past
    a line the higher score wins, and an exact tie means another hand.
    """
    ns, ew = scores
    decided = any(s >= WINNING_SCORE or s <= LOSING_SCORE for s in scores)
    if not decided or ns == ew:
        return None
    return Team.NORTH_SOUTH if ns > ew else Team.EAST_WEST
