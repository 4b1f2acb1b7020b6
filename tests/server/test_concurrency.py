"""Races: the same move sent twice at once applies once; two players racing for one seat
get one seat each at most; the version moves exactly once per applied change."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.support.client import ApiError
from tests.support.scenarios import (
    JOIN_TABLE,
    PLACE_BID,
    PLAY_CARD,
    SEATS,
    FastApi,
    SeatedTable,
    seat_four_humans,
    signed_up,
)
from tests.support.server import LiveServer

LOSING_CODES = {"NOT_YOUR_TURN", "CARD_NOT_IN_HAND", "CONFLICT"}
ROUNDS = 3


def split(results: list[Any]) -> tuple[list[dict[str, Any]], list[ApiError]]:
    """Successes and refusals of gathered calls (anything else is a test failure)."""
    unexpected = [
        r for r in results if isinstance(r, BaseException) and not isinstance(r, ApiError)
    ]
    assert not unexpected, unexpected
    return (
        [r for r in results if not isinstance(r, BaseException)],
        [r for r in results if isinstance(r, ApiError)],
    )


async def twice(player: FastApi, query: str, **variables: Any) -> list[Any]:
    """The same request sent twice at once by the same player."""
    return list(
        await asyncio.gather(
            player.call(query, **variables),
            player.call(query, **variables),
            return_exceptions=True,
        )
    )


@pytest.fixture
async def table(server: LiveServer) -> SeatedTable:
    """Four humans, the game started."""
    return await seat_four_humans(server, seed=13)


async def test_the_same_bid_sent_twice_at_once_applies_once(table: SeatedTable) -> None:
    for _ in range(4):
        before = await table.view()
        player = table.players[before["turn"]]
        results = await twice(
            player, PLACE_BID, t=table.table_id, b={"kind": "TRICKS", "tricks": 3}
        )
        done, refused = split(results)
        assert len(done) == 1 and len(refused) == 1, results
        # The copy of the fourth bid finds the bidding over.
        last_bid = sum(s["bid"] is not None for s in before["seats"]) == 3
        allowed = LOSING_CODES | ({"WRONG_PHASE"} if last_bid else set())
        assert refused[0].code in allowed, refused[0].errors
        after = await table.view()
        assert after["version"] == before["version"] + 1
        assert done[0]["placeBid"]["version"] == after["version"]
        assert (
            sum(s["bid"] is not None for s in after["seats"])
            == sum(s["bid"] is not None for s in before["seats"]) + 1
        )
    assert (await table.view())["phase"] == "PLAYING"


async def test_the_same_card_sent_twice_at_once_is_played_once(table: SeatedTable) -> None:
    await table.bid_round({seat: ("TRICKS", 3) for seat in SEATS})
    for _ in range(3):  # the first three cards of a trick: one change each
        before = await table.view()
        player = table.players[before["turn"]]
        own = await player.game(table.table_id)
        card = own["legalPlays"][0]
        results = await twice(player, PLAY_CARD, t=table.table_id, c=card)
        done, refused = split(results)
        assert len(done) == 1 and len(refused) == 1, results
        assert refused[0].code in LOSING_CODES, refused[0].errors
        mine = await player.game(table.table_id)
        assert mine["version"] == before["version"] + 1
        assert len(mine["hand"]) == len(own["hand"]) - 1 and card not in mine["hand"]
        assert mine["currentTrick"][-1] == {"seat": own["viewerSeat"], "card": card}


async def test_the_same_move_with_the_same_expected_version_applies_once(
    table: SeatedTable,
) -> None:
    before = await table.view()
    player = table.players[before["turn"]]
    results = await twice(
        player,
        PLACE_BID,
        t=table.table_id,
        b={"kind": "TRICKS", "tricks": 4},
        v=before["version"],
    )
    done, refused = split(results)
    assert len(done) == 1 and [r.code for r in refused] in (["CONFLICT"], ["NOT_YOUR_TURN"])
    assert (await table.view())["version"] == before["version"] + 1


async def test_every_seat_bidding_at_once_bids_in_turn_order_only(table: SeatedTable) -> None:
    """Whoever's request lands while it is their turn bids; the others are refused. However
    the requests interleave, the bids placed are a prefix of the bidding order."""
    before = await table.view()
    results = await asyncio.gather(
        *(
            p.call(PLACE_BID, t=table.table_id, b={"kind": "TRICKS", "tricks": 2})
            for p in table.players.values()
        ),
        return_exceptions=True,
    )
    done, refused = split(list(results))
    assert done and {r.code for r in refused} <= {"NOT_YOUR_TURN"}, results
    after = await table.view()
    assert after["version"] == before["version"] + len(done)
    order = ["EAST", "SOUTH", "WEST", "NORTH"]  # NORTH deals the first hand
    assert [s for s in order if after["seats"][SEATS.index(s)]["bid"]] == order[: len(done)]
    assert sorted(d["placeBid"]["version"] for d in done) == list(
        range(before["version"] + 1, after["version"] + 1)
    )


async def test_two_players_racing_for_one_seat_get_it_once(server: LiveServer) -> None:
    for _ in range(ROUNDS):
        host, first, second = await signed_up(server, 3)
        table_id = (await host.create_table())["id"]
        results = await asyncio.gather(
            first.call(JOIN_TABLE, t=table_id, s="SOUTH"),
            second.call(JOIN_TABLE, t=table_id, s="SOUTH"),
            return_exceptions=True,
        )
        done, refused = split(list(results))
        assert len(done) == 1 and [r.code for r in refused] == ["SEAT_TAKEN"], results
        view = await host.game(table_id)
        assert view["version"] == 1
        winner = first if not isinstance(results[0], BaseException) else second
        assert view["seats"][2]["playerId"] == winner.player_id
        seated = [s["playerId"] for s in view["seats"] if s["playerId"] is not None]
        assert seated == [host.player_id, winner.player_id]


async def test_one_player_racing_for_two_seats_gets_one(server: LiveServer) -> None:
    host, player = await signed_up(server, 2)
    table_id = (await host.create_table())["id"]
    results = await asyncio.gather(
        player.call(JOIN_TABLE, t=table_id, s="EAST"),
        player.call(JOIN_TABLE, t=table_id, s="WEST"),
        return_exceptions=True,
    )
    done, refused = split(list(results))
    assert len(done) == 1 and [r.code for r in refused] == ["ALREADY_SEATED"], results
    view = await host.game(table_id)
    assert view["version"] == 1
    assert [s["playerId"] for s in view["seats"]].count(player.player_id) == 1


async def test_the_last_two_seats_taken_at_once_start_the_game_once(server: LiveServer) -> None:
    host, east, south, west = await signed_up(server, 4)
    table_id = (await host.create_table(seed=4))["id"]
    await east.join(table_id, "EAST")
    results = await asyncio.gather(
        south.call(JOIN_TABLE, t=table_id, s="SOUTH"),
        west.call(JOIN_TABLE, t=table_id, s="WEST"),
        return_exceptions=True,
    )
    done, _ = split(list(results))
    assert len(done) == 2, results
    view = await host.game(table_id)
    # EAST (1), SOUTH and WEST (2, 3), the game started (4): one start, one deal.
    assert (view["phase"], view["version"], view["handNumber"]) == ("BIDDING", 4, 1)
    assert all(s["cardCount"] == 13 for s in view["seats"])
