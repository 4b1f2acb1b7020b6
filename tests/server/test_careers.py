"""Career statistics, ratings and profiles (docs/rules.md "Ratings and career statistics",
docs/api.md "Ratings, profiles and history"), through the real server."""

from __future__ import annotations

from tests.server.careers import (
    GAMES,
    PROFILE,
    expected_stats,
    four_at_a_table,
    me,
    play_scripted_game,
    play_with_leaver,
    profile,
    record_of,
)
from tests.support.play import TEAM_OF, kept_alive, sign_up_players
from tests.support.scenarios import FastApi
from tests.support.server import LiveServer

SEATS = ("NORTH", "EAST", "SOUTH", "WEST")


async def test_statistics_of_a_scripted_game_match_its_record_field_by_field(
    server: LiveServer,
) -> None:
    players = await sign_up_players(server, 4)
    async with kept_alive(*players):
        table_id = await play_scripted_game(players, seed=11)
        record = await record_of(players[0], table_id)
        for seat, player in zip(SEATS, players, strict=True):
            name = (await me(player))["username"]
            found = await profile(players[0], name)
            assert found is not None
            assert found["stats"] == expected_stats(record, seat), seat
    # The script makes every kind of line happen (the sums above could not be all zero).
    bids = [b["bid"] for h in record["hands"] for b in h["bids"]]
    assert "NIL" in bids and "BLIND_NIL" in bids
    assert record["winner"] == "EAST_WEST"
    # Seed 11: NORTH_SOUTH's 13 is set three times, SOUTH's later 1 made twice with bags.
    north = expected_stats(record, "NORTH")
    assert (north["contractsMade"], north["contractsSet"], north["wins"]) == (2, 3, 0)
    assert north["bags"] > 0
    assert expected_stats(record, "SOUTH")["blindNilBids"] == 2


async def test_a_player_who_left_abandoned_the_game_and_counts_the_hands_they_held(
    server: LiveServer,
) -> None:
    players = await sign_up_players(server, 4)
    async with kept_alive(*players):
        table_id, by_seat = await four_at_a_table(players, seed=12)
        await play_with_leaver(server, by_seat, table_id, leaver="EAST")
        record = await record_of(by_seat["NORTH"], table_id)
        east = await profile(by_seat["NORTH"], (await me(by_seat["EAST"]))["username"])
        west = await profile(by_seat["NORTH"], (await me(by_seat["WEST"]))["username"])
    assert east is not None and west is not None
    assert east["stats"] == expected_stats(record, "EAST", leaves_after_hand=1)
    assert east["stats"]["abandoned"] == 1 and east["stats"]["wins"] == 0
    assert east["stats"]["nilBids"] == 1  # bid before leaving: it is theirs
    assert west["stats"] == expected_stats(record, "WEST")
    assert len(record["hands"]) > 1  # the bot played the hands after the first


async def test_a_rated_game_takes_no_bots_and_moves_ratings_the_right_way(
    server: LiveServer,
) -> None:
    host = await FastApi(server).sign_up()
    table = await host.create_table(rated=True)
    refusal = await host.refusal(
        "mutation($t: ID!) { addBot(tableId: $t, seat: EAST) { id } }", t=table["id"]
    )
    assert refusal.code == "BAD_USER_INPUT"
    rated = await host.call("query($t: ID!) { table(id: $t) { rated } }", t=table["id"])
    assert rated["table"]["rated"] is True

    players = await sign_up_players(server, 4)
    async with kept_alive(*players):
        table_id = await play_scripted_game(players, seed=11, rated=True)
        record = await record_of(players[0], table_id)
        names = [(await me(p))["username"] for p in players]
        found = [await profile(players[0], n) for n in names]
        games = [(await players[0].call(GAMES, u=n, f=5))["profile"]["games"] for n in names]
    winners = {s for s in SEATS if TEAM_OF[s] == record["winner"]}
    for seat, data, page in zip(SEATS, found, games, strict=True):
        assert data is not None
        rating = data["rating"]
        assert rating["games"] == 1 and rating["provisional"] is True
        assert rating["deviation"] < 350  # one game made the model surer
        (edge,) = page["edges"]
        node = edge["node"]
        assert node["rated"] is True and node["ratingBefore"] == 1500
        assert node["ratingAfter"] == rating["value"]
        assert node["won"] is (seat in winners)
        if seat in winners:
            assert rating["value"] > 1500
        else:
            assert rating["value"] < 1500
    # An unrated game leaves ratings alone (and shows none).
    async with kept_alive(*players):
        table_id = await play_scripted_game(players, seed=11)
        again = await profile(players[0], names[0])
        page = (await players[0].call(GAMES, u=names[0], f=1))["profile"]["games"]
    assert again is not None and again["rating"] == found[0]["rating"]  # type: ignore[index]
    assert page["edges"][0]["node"]["tableId"] == table_id
    assert page["edges"][0]["node"]["ratingBefore"] is None
    assert page["pageInfo"]["hasNextPage"] is True


async def test_a_new_player_shows_1500_provisional_and_empty_statistics(
    server: LiveServer,
) -> None:
    viewer = await FastApi(server).sign_up()
    name = (await me(viewer))["username"]
    found = (await viewer.call(PROFILE, u=name.upper()))["profile"]  # usernames ignore case
    assert found["rating"] == {"value": 1500, "deviation": 350, "provisional": True, "games": 0}
    assert set(found["stats"].values()) == {0}
    assert found["memberSince"].endswith("Z")
    assert (await viewer.call(PROFILE, u="nobody-like-this"))["profile"] is None
