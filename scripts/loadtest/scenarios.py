"""The named loads. Each sets a few flags; flags given on the command line win, and
`--scale F` multiplies tables and spectators (a slower machine runs the same shape
scaled down by its speed ratio)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    """One named load shape."""

    name: str
    summary: str
    tables: int
    rate: float = 1.0  # moves/s per table (ignored by saturate and idle)
    saturate: bool = False
    idle: bool = False
    spectators: int = 0  # per table
    lobby: bool = False
    duration: float = 30.0
    processes: int = 1  # server processes (more than one: PostgreSQL + Redis)
    players: int = 0  # quick play: players pressing Play (instead of tables moving)


SCENARIOS = {
    s.name: s
    for s in (
        Scenario("moves-250x1", "250 tables x 1 move/s (1,000 sockets)", tables=250),
        Scenario(
            "tables-1000",
            "1,000 tables x 0.25 move/s: the same 250 moves/s over 4,000 sockets",
            tables=1000,
            rate=0.25,
        ),
        Scenario(
            "spectators-500",
            "1 table of 4 players and 500 spectators, 2 moves/s: a move to all 504",
            tables=1,
            rate=2.0,
            spectators=500,
        ),
        Scenario(
            "idle-10000",
            "10,000 subscribed sockets (2,500 tables), no moves: memory per socket",
            tables=2500,
            idle=True,
            duration=10.0,
        ),
        Scenario("saturate-50", "50 tables, each moving as fast as it can", 50, saturate=True),
        Scenario(
            "lobby",
            "100 tables x 0.5 move/s, every player also subscribed to lobbyUpdates",
            tables=100,
            rate=0.5,
            lobby=True,
        ),
        Scenario(
            "quickplay-400",
            "400 players press Play within 2 s across 2 processes (PostgreSQL + Redis)",
            tables=100,
            processes=2,
            players=400,
        ),
    )
}


def describe() -> str:
    """One line per scenario, for --help."""
    return "\n".join(f"  {s.name:<15} {s.summary}" for s in SCENARIOS.values())
