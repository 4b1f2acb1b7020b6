"""A human and three bots play a hand through the real server, watched live."""

from __future__ import annotations

from tests.support.client import GAME_FIELDS, Api, next_update
from tests.support.server import LiveServer


async def test_one_human_and_three_bots_play_a_hand_seen_live(server: LiveServer) -> None:
    alice = await Api(server).sign_up()
    table = await alice.create_table(name="smoke", seed=11)
    query = (
        "subscription($t: ID!) { gameUpdates(tableId: $t) "
        f"{{ event seat view {{ {GAME_FIELDS} }} }} }}"
    )
    async with alice.subscribe(query, t=table["id"]) as updates:
        first = (await next_update(updates))["gameUpdates"]
        assert first["event"] == "SNAPSHOT" and first["view"]["phase"] == "WAITING"
        for seat in ("EAST", "SOUTH", "WEST"):
            await alice.add_bot(table["id"], seat)
        events = [(await next_update(updates))["gameUpdates"] for _ in range(4)]
        assert [e["event"] for e in events] == ["SEAT_TAKEN"] * 3 + ["GAME_STARTED"]
        versions = [first["view"]["version"]] + [e["view"]["version"] for e in events]
        assert versions == list(range(versions[0], versions[0] + 5))
        view = await alice.game(table["id"])
        assert view["phase"] == "BIDDING" and len(view["hand"]) == 13
