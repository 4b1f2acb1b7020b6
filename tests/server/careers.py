"""Helpers for career tests: scripted games through the API, profile reads, and career
statistics computed by hand from a game's record (independently of the server)."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from tests.support.client import Api
from tests.support.play import (
    PARTNER,
    TEAM_OF,
    HumanTable,
    KeepAliveApi,
    View,
    game_over,
    game_record,
    take_turn,
)
from tests.support.server import LiveServer

STATS = (
    "games wins abandoned hands contractsMade contractsSet nilBids nilsMade "
    "blindNilBids blindNilsMade bags"
)
PROFILE = (
    "query($u: String!) { profile(username: $u) { player { id username } memberSince "
    f"rating {{ value deviation provisional games }} stats {{ {STATS} }} }} }}"
)
GAMES = (
    "query($u: String!, $f: Int, $a: String) { profile(username: $u) { games(first: $f, "
    "after: $a) { edges { cursor node { tableId finishedAt rated seat team won abandoned "
    "scoreFor scoreAgainst partner { username } opponents { username } ratingBefore "
    "ratingAfter } } pageInfo { hasNextPage endCursor } } } }"
)
LEADERBOARD = (
    "query($f: Int, $a: String) { leaderboard(first: $f, after: $a) { edges { cursor node "
    "{ rank player { id username } rating { value deviation provisional games } } } "
    "pageInfo { hasNextPage endCursor } } }"
)
ME = "{ me { id username } }"


def scripted_bid(view: View) -> dict[str, Any]:
    """NORTH always bids 13 (so NORTH_SOUTH is set every hand and the game ends within a
    few hands); SOUTH bids BLIND_NIL whenever allowed, else 1; EAST bids NIL in hand 1,
    else 2; WEST bids 3."""
    seat, hand = view["viewerSeat"], view["handNumber"]
    if seat == "NORTH":
        return {"kind": "TRICKS", "tricks": 13}
    if seat == "SOUTH":
        if view["blindNilEligible"]:
            return {"kind": "BLIND_NIL"}
        return {"kind": "TRICKS", "tricks": 1}
    if seat == "EAST":
        return {"kind": "NIL"} if hand == 1 else {"kind": "TRICKS", "tricks": 2}
    return {"kind": "TRICKS", "tricks": 3}


async def me(api: Api) -> dict[str, str]:
    """The caller's id and username."""
    return dict((await api.call(ME))["me"])


async def profile(api: Api, username: str) -> dict[str, Any] | None:
    """profile(username)."""
    found: dict[str, Any] | None = (await api.call(PROFILE, u=username))["profile"]
    return found


async def four_at_a_table(
    players: list[KeepAliveApi], seed: int, **options: Any
) -> tuple[str, dict[str, KeepAliveApi]]:
    """A table (seeded) with the four players seated NORTH, EAST, SOUTH, WEST."""
    by_seat = dict(zip(("NORTH", "EAST", "SOUTH", "WEST"), players, strict=True))
    table = await by_seat["NORTH"].create_table(seed=seed, **options)
    for seat in ("EAST", "SOUTH", "WEST"):
        await by_seat[seat].join(table["id"], seat)
    return table["id"], by_seat


async def play_scripted_game(players: list[KeepAliveApi], seed: int, **options: Any) -> str:
    """Four humans play a whole scripted game; returns the table id."""
    table_id, by_seat = await four_at_a_table(players, seed, **options)
    await HumanTable(table_id, dict(by_seat), choose_bid=scripted_bid).play_until(game_over)
    return table_id


async def play_with_leaver(
    server: LiveServer, by_seat: dict[str, KeepAliveApi], table_id: str, leaver: str
) -> None:
    """Humans act on their turns (scripted bids); `leaver` leaves right after its first
    bid and a bot plays its seat to the end."""
    left = False
    for _ in range(3000):
        view = await by_seat["NORTH"].game(table_id)
        if game_over(view):
            return
        seat = view["turn"]
        bids = [s for s in view["seats"] if s["seat"] == leaver and s["bid"] is not None]
        if not left and bids:
            await by_seat[leaver].leave(table_id)
            left = True
            continue
        if seat is None or (left and seat == leaver):
            await asyncio.sleep(0.02)  # a bot's turn (or a trick being won)
            continue
        mine = await by_seat[seat].game(table_id)
        if mine["turn"] == seat and mine["version"] == view["version"]:
            await take_turn(by_seat[seat], table_id, mine, scripted_bid)
    raise AssertionError("the game did not end")


def expected_stats(
    record: dict[str, Any], seat: str, leaves_after_hand: int | None = None
) -> dict[str, int]:
    """A seat's statistics computed by hand from a game record: the player of `seat`
    (who, with `leaves_after_hand`, held it only up to that hand and did not come back)."""
    team = TEAM_OF[seat]
    stats = dict.fromkeys(STATS.split(), 0)
    stats["games"] = 1
    for hand in record["hands"]:
        if leaves_after_hand is not None and hand["number"] > leaves_after_hand:
            continue
        stats["hands"] += 1
        result = hand["result"][team]
        if result["target"] is not None and result["target"] >= 1:
            made = result["tricks"] >= result["target"]
            stats["contractsMade" if made else "contractsSet"] += 1
        stats["bags"] += result["bags"]
        won = Counter(t["winner"] for t in hand["tricks"])
        bid = next(b["bid"] for b in hand["bids"] if b["seat"] == seat)
        if bid == "NIL":
            stats["nilBids"] += 1
            stats["nilsMade"] += won[seat] == 0
        elif bid == "BLIND_NIL":
            stats["blindNilBids"] += 1
            stats["blindNilsMade"] += won[seat] == 0
    if leaves_after_hand is not None:
        stats["abandoned"] = 1
    elif record["winner"] == team:
        stats["wins"] = 1
    return stats


async def record_of(api: Api, table_id: str) -> dict[str, Any]:
    """The finished game's record."""
    return await game_record(api, table_id)


__all__ = ["PARTNER", "expected_stats"]
