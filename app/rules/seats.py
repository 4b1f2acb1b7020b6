"""Seats, partnerships and the clockwise order of the table."""

from __future__ import annotations

from enum import IntEnum


class Seat(IntEnum):
    """The four seats in clockwise order; the value is the seat's index."""

    NORTH = 0
    EAST = 1
    SOUTH = 2
    WEST = 3

    @property
    def left(self) -> Seat:
        """The next seat clockwise (the seat to this one's left)."""
        return SEATS[(self + 1) % 4]

    @property
    def partner(self) -> Seat:
        """The seat opposite, which shares this seat's team."""
        return SEATS[(self + 2) % 4]

    @property
    def team(self) -> Team:
        """The partnership this seat plays for."""
        return TEAMS[self % 2]

    @property
    def bot_id(self) -> str:
        """The player id a bot in this seat carries, e.g. `bot:north`."""
        return f"bot:{self.name.lower()}"


class Team(IntEnum):
    """The two fixed partnerships: NORTH+SOUTH against EAST+WEST."""

    NORTH_SOUTH = 0
    EAST_WEST = 1

    @property
    def seats(self) -> tuple[Seat, Seat]:
        """The team's two seats."""
        return (SEATS[self], SEATS[self + 2])

    @property
    def other(self) -> Team:
        """The opposing team."""
        return TEAMS[1 - self]


SEATS: tuple[Seat, ...] = tuple(Seat)
TEAMS: tuple[Team, ...] = tuple(Team)


def seats_from(first: Seat) -> list[Seat]:
    """All four seats clockwise, starting with `first`."""
    return [SEATS[(first + i) % 4] for i in range(4)]
