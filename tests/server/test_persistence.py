"""Restart and resume: a server stopped (gracefully or by SIGKILL) mid-hand comes back on
the same database with every seat's view exactly as it was, the game goes on, bots that
owed a move make it, and the stored move log has neither gap nor duplicate."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.client import next_update
from tests.support.scenarios import (
    GAME_UPDATES,
    FastApi,
    assert_log_without_gaps,
    seat_four_humans,
)
from tests.support.server import LiveServer

BIDS = {
    "EAST": ("TRICKS", 3),
    "SOUTH": ("NIL", None),
    "WEST": ("TRICKS", 5),
    "NORTH": ("TRICKS", 4),
}


@pytest.mark.parametrize("kill", [False, True], ids=["sigterm", "sigkill"])
async def test_a_hand_in_progress_resumes_exactly_after_a_restart(
    fresh_server: LiveServer, kill: bool
) -> None:
    table = await seat_four_humans(fresh_server, seed=21)
    await table.bid_round(BIDS)
    await table.play_legal(6)  # one trick won, two cards of the second on the table
    before = await table.views()
    north = before["NORTH"]
    assert north["phase"] == "PLAYING" and len(north["currentTrick"]) == 2
    assert north["lastTrick"] is not None and north["turn"] is not None
    assert [s["bid"] for s in north["seats"]] == [
        {"kind": "TRICKS", "tricks": 4},
        {"kind": "TRICKS", "tricks": 3},
        {"kind": "NIL", "tricks": None},
        {"kind": "TRICKS", "tricks": 5},
    ]

    fresh_server.stop(kill=kill)
    assert assert_log_without_gaps(fresh_server.database, table.table_id) == north["version"]
    fresh_server.start()

    # Same tokens, same views: hands, bids, current and last trick, turn, version.
    assert await table.views() == before
    view = await table.play_legal(52 - 6)
    assert (view["phase"], view["handNumber"]) == ("BIDDING", 2)
    assert [r["handNumber"] for r in view["history"]] == [1, 1]
    assert sum(r["tricks"] for r in view["history"]) == 13

    fresh_server.stop(kill=kill)
    assert assert_log_without_gaps(fresh_server.database, table.table_id) == view["version"]


async def test_bots_make_the_moves_they_owed_after_a_restart(tmp_path: Path) -> None:
    # Bots that think for a minute: once the game starts, EAST (a bot) owes the first bid
    # when the server is killed.
    live = LiveServer(tmp_path / "spades.db", env={"SPADES_BOT_DELAY_MS": "60000"})
    live.start()
    try:
        alice = await FastApi(live).sign_up()
        table_id = (await alice.create_table(seed=5))["id"]
        for seat in ("EAST", "SOUTH", "WEST"):
            await alice.add_bot(table_id, seat)
        owed = await alice.game(table_id)
        assert (owed["phase"], owed["turn"]) == ("BIDDING", "EAST")
        live.stop(kill=True)
        assert assert_log_without_gaps(live.database, table_id) == owed["version"]

        # Back with quick bots: EAST, SOUTH and WEST bid without anyone prompting them.
        live.extra_env = {}
        live.start()
        async with alice.subscribe(GAME_UPDATES, t=table_id, s=owed["version"]) as updates:
            bids = [(await next_update(updates))["gameUpdates"] for _ in range(3)]
            assert [(u["event"], u["seat"]) for u in bids] == [
                ("BID_PLACED", "EAST"),
                ("BID_PLACED", "SOUTH"),
                ("BID_PLACED", "WEST"),
            ]
            view = await alice.game(table_id)
            assert view == bids[-1]["view"]
            assert (view["turn"], view["version"]) == ("NORTH", owed["version"] + 3)
            assert view["hand"] == owed["hand"]

            # The hand goes on to its end: alice bids and plays, the bots answer each time.
            await alice.bid(table_id, "TRICKS", 3)
            while view["handNumber"] == 1:
                await next_update(updates)  # something happened: look again
                view = await alice.game(table_id)
                if view["turn"] == "NORTH" and view["legalPlays"]:
                    view = await alice.play(table_id, view["legalPlays"][0])
        assert len(view["history"]) == 2
        live.stop()
        # The bots may have gone on bidding hand 2 meanwhile.
        assert assert_log_without_gaps(live.database, table_id) >= view["version"]
    finally:
        live.stop()
