"""Tournament totals and the printed table (wins with a Wilson 95% interval)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.rules.levels import BotLevel
from app.tournament.runner import GameOutcome, SideStats

Z95 = 1.959964


def wilson(wins: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default)."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) of `values` by the nearest-rank method (0 when empty)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


@dataclass
class Totals:
    """Everything a tournament counts."""

    a: BotLevel
    b: BotLevel
    games: int = 0
    a_wins: int = 0
    margins: int = 0
    a_stats: SideStats = field(default_factory=SideStats)
    b_stats: SideStats = field(default_factory=SideStats)
    times: dict[BotLevel, list[float]] = field(default_factory=dict)

    def add(self, outcome: GameOutcome) -> None:
        """Count one game."""
        self.games += 1
        self.a_wins += outcome.a_won
        self.margins += outcome.margin
        self.a_stats.add(outcome.a)
        self.b_stats.add(outcome.b)
        for level, values in outcome.times.items():
            self.times.setdefault(level, []).extend(values)

    def table(self) -> str:
        """The results as an aligned text table."""
        low, high = wilson(self.a_wins, self.games)
        rate = self.a_wins / self.games if self.games else 0.0
        lines = [
            f"A = {self.a.value}, B = {self.b.value}: {self.games} games "
            f"({self.games // 2} seeds, each dealt twice with the levels swapping seats)",
            f"games won by A: {self.a_wins}/{self.games} = {rate:.1%} "
            f"(95% CI {low:.1%} .. {high:.1%}, Wilson)",
            f"mean final margin (A - B): {self.margins / max(1, self.games):+.1f}",
            "",
            f"{'per hand':<22}{'A ' + self.a.value:>16}{'B ' + self.b.value:>16}",
        ]
        a, b = self.a_stats, self.b_stats
        rows = [
            ("hands", a.hands, b.hands, False),
            ("contracts made", a.made, b.made, True),
            ("contracts set", a.set, b.set, True),
            ("NIL bids", a.nil_bids, b.nil_bids, True),
            ("  of which BLIND_NIL", a.blind_nil_bids, b.blind_nil_bids, True),
            ("NIL made", a.nil_made, b.nil_made, True),
            ("bags", a.bags, b.bags, True),
        ]
        for name, x, y, per_hand in rows:
            if per_hand:
                lines.append(f"{name:<22}{_per(x, a.hands):>16}{_per(y, b.hands):>16}")
            else:
                lines.append(f"{name:<22}{x:>16}{y:>16}")
        lines.append("")
        lines.append(f"{'decision time':<22}{'p50 ms':>12}{'p95 ms':>12}{'max ms':>12}{'n':>10}")
        for level in (self.a, self.b) if self.a is not self.b else (self.a,):
            values = self.times.get(level, [])
            lines.append(
                f"{level.value:<22}{percentile(values, 0.5) * 1e3:>12.3f}"
                f"{percentile(values, 0.95) * 1e3:>12.3f}"
                f"{(max(values) if values else 0.0) * 1e3:>12.3f}{len(values):>10}"
            )
        return "\n".join(lines)


def _per(count: int, hands: int) -> str:
    return f"{count} ({count / max(1, hands):.3f})"
