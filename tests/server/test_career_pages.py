"""Profile game lists and the leaderboard: cursor paging that neither repeats nor skips
while games finish between pages, bad sizes and cursors, and blocked players hidden."""

from __future__ import annotations

import base64
import json
import sqlite3
from typing import Any

import pytest

from app.rules.rating import SCALE
from tests.server.careers import GAMES, LEADERBOARD, me, play_scripted_game, profile
from tests.support.client import Api
from tests.support.play import kept_alive, sign_up_players
from tests.support.scenarios import FastApi
from tests.support.server import LiveServer
from tests.support.social import Social


def seed_rating(server: LiveServer, player: dict[str, str], value: int, games: int) -> None:
    """Give a player an established rating, straight in the database (ten rated games
    through the API would take minutes): sigma 8 so that one game moves it a lot."""
    mu = 25 + (value - 1500) / SCALE
    connection = sqlite3.connect(server.database)
    try:
        connection.execute(
            "INSERT INTO ratings (player_id, username_key, mu, sigma, value, deviation, games,"
            " seq, listed, board_value, board_games) VALUES (?, ?, ?, 8.0, ?, 336, ?, 0, ?, ?, ?)",
            (
                player["id"],
                player["username"].lower(),
                mu,
                value,
                games,
                games >= 10,
                -value,
                -games,
            ),
        )
        connection.commit()
    finally:
        connection.close()


async def all_pages(
    api: Api, query: str, size: int, key: str, between: Any = None, **variables: Any
) -> list[dict[str, Any]]:
    """Every node of a connection, page by page; `between` runs after the first page."""
    nodes: list[dict[str, Any]] = []
    after = None
    while True:
        data = (await api.call(query, f=size, a=after, **variables))[key]
        connection = data["games"] if key == "profile" else data
        nodes += [edge["node"] for edge in connection["edges"]]
        for edge in connection["edges"]:
            assert edge["cursor"]
        if not connection["pageInfo"]["hasNextPage"]:
            return nodes
        after = connection["pageInfo"]["endCursor"]
        if between is not None:
            await between()
            between = None


async def test_leaderboard_pages_neither_repeat_nor_skip_while_a_rated_game_finishes(
    server: LiveServer,
) -> None:
    viewer = await FastApi(server).sign_up()
    # NORTH_SOUTH loses the scripted game (seed 11): NORTH stands 3rd and would fall into
    # later pages; EAST and WEST win and would climb from the second page into the first.
    others = [await FastApi(server).sign_up() for _ in range(6)]
    players = await sign_up_players(server, 4)
    ids = {}
    board = [1700, 1690, 1680, 1670, 1660, 1650, 1640, 1630, 1620, 1610]
    north, east, south, west = players
    placed: list[tuple[Api, int]] = [
        (others[0], 1700),
        (others[1], 1690),
        (north, 1680),
        (others[2], 1670),
        (others[3], 1660),
        (east, 1650),
        (west, 1640),
        (others[4], 1630),
        (south, 1620),
        (others[5], 1610),
    ]
    for api, value in placed:
        player = await me(api)
        ids[player["id"]] = value
        seed_rating(server, player, value, games=12)
    provisional = await FastApi(server).sign_up()
    seed_rating(server, await me(provisional), 1800, games=9)  # not on the board

    async def finish_a_rated_game() -> None:
        async with kept_alive(*players):
            await play_scripted_game(players, seed=11, rated=True)

    nodes = await all_pages(viewer, LEADERBOARD, 3, "leaderboard", finish_a_rated_game)
    ours = [n for n in nodes if n["player"]["id"] in ids]
    assert [n["player"]["id"] for n in ours] == sorted(ids, key=lambda p: -ids[p])
    assert [n["rating"]["value"] for n in ours] == board  # as the board stood at page one
    ranks = [n["rank"] for n in nodes]
    assert ranks == list(range(1, len(nodes) + 1))
    # A new first page shows the game's effect: the winners climbed, NORTH fell.
    now = {n["player"]["id"]: n for n in await all_pages(viewer, LEADERBOARD, 100, "leaderboard")}
    assert now[(await me(east))["id"]]["rating"]["value"] > 1650
    assert now[(await me(north))["id"]]["rating"]["value"] < 1680
    assert now[(await me(east))["id"]]["rank"] < 6
    assert (await me(provisional))["id"] not in now


async def test_game_lists_page_newest_first_without_repeats_while_games_finish(
    server: LiveServer,
) -> None:
    players = await sign_up_players(server, 4)
    name = (await me(players[0]))["username"]
    async with kept_alive(*players):
        first = await play_scripted_game(players, seed=11)
        second = await play_scripted_game(players, seed=11)

        async def third_game() -> None:
            third.append(await play_scripted_game(players, seed=11))

        third: list[str] = []
        nodes = await all_pages(players[0], GAMES, 1, "profile", third_game, u=name)
        assert [n["tableId"] for n in nodes] == [second, first]
        fresh = await all_pages(players[0], GAMES, 2, "profile", u=name)
    assert [n["tableId"] for n in fresh] == [third[0], second, first]
    node = fresh[0]
    assert node["seat"] == "NORTH" and node["team"] == "NORTH_SOUTH" and node["won"] is False
    assert node["finishedAt"].endswith("Z") and node["abandoned"] is False
    assert node["scoreFor"] < node["scoreAgainst"]
    usernames = [(await me(p))["username"] for p in players]
    assert node["partner"] == {"username": usernames[2]}
    assert {o["username"] for o in node["opponents"]} == {usernames[1], usernames[3]}


@pytest.mark.parametrize("first", [0, 101, -5, None])
async def test_a_page_size_outside_1_to_100_is_bad_input(server: LiveServer, first: Any) -> None:
    api = await FastApi(server).sign_up()
    name = (await me(api))["username"]
    for query, variables in ((LEADERBOARD, {}), (GAMES, {"u": name})):
        refusal = await api.refusal(query, f=first, a=None, **variables)
        assert refusal.code == "BAD_USER_INPUT"


def _body(body: list[Any]) -> str:
    """A cursor body as the server writes one, without (or before) its signature."""
    raw = json.dumps(body, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


async def test_malformed_forged_and_foreign_cursors_are_bad_input(server: LiveServer) -> None:
    players = await sign_up_players(server, 4)
    async with kept_alive(*players):
        await play_scripted_game(players, seed=11)
    alice, bob = (await me(players[0]))["username"], (await me(players[1]))["username"]
    own = (await players[0].call(GAMES, u=alice, f=1, a=None))["profile"]["games"]
    cursor = own["pageInfo"]["endCursor"]
    after = (await players[0].call(GAMES, u=alice, f=1, a=cursor))["profile"]["games"]
    assert after == {"edges": [], "pageInfo": {"hasNextPage": False, "endCursor": None}}
    seed_rating(server, await me(players[0]), 1500, games=10)
    seed_rating(server, await me(players[1]), 1400, games=10)
    board = (await players[0].call(LEADERBOARD, f=1, a=None))["leaderboard"]
    board_cursor = board["pageInfo"]["endCursor"]
    assert board_cursor is not None
    alice_id = (await me(players[0]))["id"]
    signature = cursor.partition(".")[2]
    forged_games = _body(["gm", alice_id, 10**6]) + "." + signature
    forged_board = _body(["lb", 0, 0, 0, "", 1]) + "." + board_cursor.partition(".")[2]
    for query, bad, variables in (
        (GAMES, forged_games, {"u": alice}),  # a moved position under the old signature
        (GAMES, cursor.partition(".")[0], {"u": alice}),  # the signature cut off
        (GAMES, _body(["gm", alice_id, 10**6]), {"u": alice}),  # never signed
        (LEADERBOARD, forged_board, {}),
        (GAMES, "not a cursor", {"u": alice}),
        (GAMES, cursor + "x", {"u": alice}),
        (GAMES, cursor, {"u": bob}),  # another player's list
        (GAMES, board_cursor, {"u": alice}),  # another kind of list
        (LEADERBOARD, cursor, {}),
        (LEADERBOARD, "W10", {}),
        (LEADERBOARD, "x" * 5000, {}),
    ):
        code = await players[0].error(query, f=1, a=bad, **variables)
        assert code == "BAD_USER_INPUT", (bad, variables)


async def test_players_who_blocked_each_other_see_neither_profile_nor_leaderboard_entry(
    server: LiveServer,
) -> None:
    blocker = await Social(server).sign_up()
    blocked = await Social(server).sign_up()
    bystander = await FastApi(server).sign_up()
    a, b = await me(blocker), await me(blocked)
    seed_rating(server, a, 1555, games=10)
    seed_rating(server, b, 1544, games=10)
    await blocker.block(b["id"])
    assert await profile(blocker, b["username"]) is None
    assert await profile(blocked, a["username"]) is None  # either way
    assert await profile(bystander, a["username"]) is not None
    assert (await profile(blocker, a["username"])) is not None  # one's own

    async def board_ids(api: Api) -> set[str]:
        return {n["player"]["id"] for n in await all_pages(api, LEADERBOARD, 100, "leaderboard")}

    assert b["id"] not in await board_ids(blocker)
    assert a["id"] not in await board_ids(blocked)
    assert {a["id"], b["id"]} <= await board_ids(bystander)


async def test_profiles_and_the_leaderboard_need_a_signed_in_caller(server: LiveServer) -> None:
    anonymous = FastApi(server)
    for query, variables in ((LEADERBOARD, {"f": 5, "a": None}), (GAMES, {"u": "x", "f": 1})):
        refusal = await anonymous.refusal(query, **variables)
        assert refusal.code == "UNAUTHENTICATED"
