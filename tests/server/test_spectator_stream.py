"""A spectator's complete gameUpdates stream of a whole game never holds an unplayed
card (docs/rules.md, Table access: "Spectators never see any unplayed card")."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.client import ApiError, next_update
from tests.support.server import LiveServer
from tests.support.social import GAME_UPDATES, Social

PLAYED_FIELDS = ("currentTrick", "lastTrick")

Card = tuple[str, str]


def card(data: dict[str, Any]) -> Card:
    return (data["suit"], data["rank"])


def cards_outside_played_fields(value: Any, path: str = "view") -> list[str]:
    """Paths of every card in a payload that is not in currentTrick/lastTrick."""
    found: list[str] = []
    if isinstance(value, dict):
        if "suit" in value and "rank" in value:
            return [path]
        for key, item in value.items():
            if key not in PLAYED_FIELDS:
                found += cards_outside_played_fields(item, f"{path}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += cards_outside_played_fields(item, f"{path}[{index}]")
    return found


def plays_shown(view: dict[str, Any]) -> set[tuple[str, Card]]:
    """(seat, card) of every play in currentTrick and lastTrick."""
    plays = list(view["currentTrick"])
    if view["lastTrick"] is not None:
        plays += view["lastTrick"]["plays"]
    return {(p["seat"], card(p["card"])) for p in plays}


async def act_as_north(human: Social, table_id: str) -> bool:
    """If it is NORTH's turn now, make one move: reveal when offered blind nil, bid a team
    total of 13 (almost always set: -130 a hand ends the game at -250 in a few hands),
    play the first legal card. Says whether a move was made."""
    view = await human.game(table_id)
    if view["turn"] != "NORTH":
        return False
    if view["phase"] == "BIDDING":
        if view["handWithheld"]:
            await human.reveal(table_id)
            return True
        await human.bid(table_id, "TRICKS", 13)
    elif view["phase"] == "PLAYING":
        await human.play(table_id, view["legalPlays"][0])
    else:
        raise AssertionError(f"NORTH to act in {view['phase']}")
    return True


async def play_north(human: Social, table_id: str, ready: asyncio.Event) -> int:
    """Play NORTH until the game is over, woken by NORTH's own gameUpdates. Returns the
    number of moves made."""
    moves = 0
    async with human.subscribe(GAME_UPDATES, t=table_id) as updates:
        while True:
            update = (await next_update(updates, timeout=30))["gameUpdates"]
            ready.set()  # the SNAPSHOT came: the subscription is live
            if update["event"] == "GAME_OVER":
                return moves
            if update["view"]["turn"] == "NORTH" and await act_as_north(human, table_id):
                moves += 1


async def test_a_spectator_sees_a_whole_game_without_any_unplayed_card(
    server: LiveServer,
) -> None:
    human = await Social.signed_up(server, "north")
    spectator = await Social.signed_up(server, "spectator")
    table = await human.create_table(name="watched", seed=20240607)
    table_id = table["id"]
    await spectator.watch(table_id)
    updates: list[dict[str, Any]] = []
    async with spectator.subscribe(GAME_UPDATES, t=table_id) as stream:
        first = (await next_update(stream))["gameUpdates"]
        assert first["event"] == "SNAPSHOT" and first["view"]["phase"] == "WAITING"
        updates.append(first)
        ready = asyncio.Event()
        player = asyncio.create_task(play_north(human, table_id, ready))
        try:
            await asyncio.wait_for(ready.wait(), 10)
            for seat in ("EAST", "SOUTH", "WEST"):
                await human.add_bot(table_id, seat)
            while updates[-1]["event"] != "GAME_OVER":
                updates.append((await next_update(stream, timeout=30))["gameUpdates"])
            moves = await asyncio.wait_for(player, 30)
        finally:
            player.cancel()
            await asyncio.gather(player, return_exceptions=True)
    assert moves > 0

    versions = [u["view"]["version"] for u in updates]
    assert versions == list(range(versions[0], versions[0] + len(versions))), "a gap"
    assert updates[-1]["view"]["winner"] is not None
    assert sum(u["event"] == "CARD_PLAYED" for u in updates) % 52 == 0
    assert sum(u["event"] == "HAND_SCORED" for u in updates) >= 1

    played: set[tuple[str, Card]] = set()
    for update in updates:
        view = update["view"]
        where = f"{update['event']} v{view['version']}"
        assert view["hand"] is None, where
        assert view["legalPlays"] == [], where
        assert view["viewerSeat"] is None, where
        assert view["handWithheld"] is False, where
        assert cards_outside_played_fields(view) == [], where
        if update["event"] == "CARD_PLAYED":
            new = [p for p in view["currentTrick"] if p["seat"] == update["seat"]]
            assert len(new) == 1, where
            played.add((new[0]["seat"], card(new[0]["card"])))
        if update["event"] in ("HAND_DEALT", "GAME_STARTED"):
            played.clear()
        # Every card shown was played, by that seat, at or before this update.
        assert plays_shown(view) <= played, where


async def test_a_stranger_cannot_read_a_seat_view_through_game(server: LiveServer) -> None:
    human = await Social.signed_up(server, "host2")
    spectator = await Social.signed_up(server, "watcher2")
    table = await human.create_table(seed=7)
    for seat in ("EAST", "SOUTH", "WEST"):
        await human.add_bot(table["id"], seat)
    view = await spectator.game(table["id"])
    assert view["phase"] == "BIDDING"
    assert view["hand"] is None and view["legalPlays"] == [] and view["viewerSeat"] is None
    assert cards_outside_played_fields(view) == []
    with pytest.raises(ApiError) as refused:
        await spectator.play(table["id"], {"suit": "CLUBS", "rank": "TWO"})
    assert refused.value.code == "FORBIDDEN"
