"""Who may see, sit at, watch and follow each kind of table (docs/rules.md, Table access).

One table per (visibility, join policy) pair, one player per relation to its host,
every action: the outcome of each cell is derived from docs/rules.md by `expected_outcome`
below, never from the server's own access code.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from tests.support.client import ApiError, next_update
from tests.support.server import LiveServer
from tests.support.social import GAME_UPDATES, Beacon, Social, befriend, lobby_stream, seat_of

pytestmark = pytest.mark.asyncio(loop_scope="module")

# (visibility, join policy, spectating)
Config = tuple[str, str, bool]

SPECTATING_ON: tuple[Config, ...] = (
    ("PUBLIC", "OPEN", True),
    ("PUBLIC", "FRIENDS_ONLY", True),
    ("PUBLIC", "INVITE_ONLY", True),
    ("FRIENDS_ONLY", "FRIENDS_ONLY", True),
    ("FRIENDS_ONLY", "INVITE_ONLY", True),
    ("PRIVATE", "INVITE_ONLY", True),
)
SPECTATING_OFF: tuple[Config, ...] = (
    ("PUBLIC", "INVITE_ONLY", False),
    ("PRIVATE", "INVITE_ONLY", False),
)

RELATIONS = (
    "stranger",
    "friend",  # a friend of the host
    "invited",  # invited by the host
    "join_link",  # redeemed the table's join link; presents the code to sit and watch
    "spectator_link",  # redeemed the table's spectator link; presents it to sit and watch
    "blocked",  # was the host's friend, then the host blocked them
    "seated",  # sits at the table (SOUTH)
)
ACTIONS = ("lobby", "table", "sit", "watch", "lobby_updates")

OK = "OK"
# The seat a sitting attempt takes (the host sits NORTH, the seated player SOUTH, and
# WEST is where the host adds a bot to make a lobby update).
FREE_SEAT = "EAST"
BOT_SEAT = "WEST"


def expected_outcome(config: Config, relation: str, action: str) -> str:
    """ "OK" or the error code docs/rules.md calls for. For `lobby` and `lobby_updates`, NOT_FOUND
    means the table is not listed / its updates do not arrive."""
    visibility, policy, spectating = config
    # "Seated players, invited players and holders of a join or spectator link can always
    # see the table." A block ends the friendship, so a blocked ex-friend is a stranger here.
    always_sees = relation in ("seated", "invited", "join_link", "spectator_link")
    if visibility == "PUBLIC":
        sees = True
    elif visibility == "FRIENDS_ONLY":
        sees = always_sees or relation == "friend"
    else:  # PRIVATE: "nobody by listing"
        sees = always_sees
    if not sees:
        return "NOT_FOUND"
    if action in ("lobby", "table", "lobby_updates"):
        return OK
    if relation == "seated":
        return "ALREADY_SEATED"
    if action == "watch":
        # "When on, anyone who can see the table may watch it ... When off, nobody watches."
        return OK if spectating else "FORBIDDEN"
    # Sitting. docs/rules.md does not say a block keeps one from sitting; the server refuses a
    # seat to a player blocked either way by the host, and this test pins that choice.
    if relation == "blocked":
        return "FORBIDDEN"
    # "Invited players and join-link holders may always sit"; a spectator link does not
    # let its holder sit, so they are left with what the join policy gives a stranger.
    if relation in ("invited", "join_link"):
        return OK
    if policy == "OPEN":
        return OK
    if policy == "FRIENDS_ONLY":
        return OK if relation == "friend" else "FORBIDDEN"
    return "FORBIDDEN"  # INVITE_ONLY: nobody by default


@dataclass
class World:
    """The players and tables every cell of the matrix uses."""

    host: Social
    players: dict[str, Social]
    tables: dict[Config, str]
    codes: dict[tuple[str, str], str]  # (table id, relation) -> the code that relation holds
    beacon: Beacon


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(server: LiveServer) -> AsyncIterator[World]:
    host = await Social.signed_up(server, "host")
    signed_up = await asyncio.gather(*(Social.signed_up(server, r) for r in RELATIONS))
    players = dict(zip(RELATIONS, signed_up, strict=True))
    await befriend(players["friend"], host)
    await befriend(players["blocked"], host)
    await host.block(players["blocked"].pid)
    codes: dict[tuple[str, str], str] = {}

    async def set_up(config: Config) -> str:
        visibility, policy, spectating = config
        table = await host.create_table(
            name=f"{visibility} {policy} {spectating}",
            visibility=visibility,
            joinPolicy=policy,
            spectating=spectating,
        )
        table_id = str(table["id"])
        await host.invite(table_id, players["seated"].name)
        await players["seated"].join(table_id, "SOUTH")
        await host.invite(table_id, players["invited"].name)
        codes[table_id, "join_link"] = await host.join_link(table_id)
        codes[table_id, "spectator_link"] = await host.spectator_link(table_id)
        for relation in ("join_link", "spectator_link"):
            # Redeeming the code once makes the player its holder.
            await players[relation].table(table_id, code=codes[table_id, relation])
        return table_id

    configs = SPECTATING_ON + SPECTATING_OFF
    table_ids = await asyncio.gather(*(set_up(c) for c in configs))
    tables = dict(zip(configs, table_ids, strict=True))
    yield World(host, players, tables, codes, await Beacon.create(server))


async def attempt(world: World, config: Config, relation: str, action: str) -> str:
    """Carry out one cell and say what happened ("OK" or the error code). A cell that
    changes the table (a successful sit, the bot for a lobby update) undoes it."""
    table_id = world.tables[config]
    player = world.players[relation]
    code = world.codes.get((table_id, relation))
    try:
        if action == "lobby":
            return OK if table_id in await player.lobby_ids() else "NOT_FOUND"
        if action == "table":
            assert (await player.table(table_id))["id"] == table_id
            return OK
        if action == "sit":
            table = await player.join(table_id, FREE_SEAT, code)
            try:
                assert seat_of(table, player.pid) == FREE_SEAT
            finally:
                await player.leave(table_id)
                if relation == "invited":  # sitting used up the invitation
                    await world.host.invite(table_id, player.name)
            return OK
        if action == "watch":
            table = await player.watch(table_id, code)
            assert table["id"] == table_id and table["game"]["viewerSeat"] is None
            return OK
        assert action == "lobby_updates"
        async with lobby_stream(player, world.beacon) as stream:
            await world.host.add_bot(table_id, BOT_SEAT)
            await world.host.kick(table_id, f"bot:{BOT_SEAT.lower()}")
            events = await stream.events_for(table_id)
        if not events:
            return "NOT_FOUND"
        assert events == ["TABLE_UPDATED", "TABLE_UPDATED"]
        return OK
    except ApiError as exc:
        return str(exc.code)


def _cells(configs: tuple[Config, ...], actions: tuple[str, ...]) -> list[object]:
    return [
        pytest.param(config, relation, action, id=f"{config[0]}/{config[1]}-{relation}-{action}")
        for config in configs
        for relation in RELATIONS
        for action in actions
    ]


@pytest.mark.parametrize(("config", "relation", "action"), _cells(SPECTATING_ON, ACTIONS))
async def test_visibility_join_policy_and_relation_decide_each_action(
    world: World, config: Config, relation: str, action: str
) -> None:
    assert await attempt(world, config, relation, action) == expected_outcome(
        config, relation, action
    )


@pytest.mark.parametrize(
    ("config", "relation", "action"), _cells(SPECTATING_OFF, ("watch", "sit", "table"))
)
async def test_with_spectating_off_nobody_watches_and_a_spectator_link_still_cannot_sit(
    world: World, config: Config, relation: str, action: str
) -> None:
    assert await attempt(world, config, relation, action) == expected_outcome(
        config, relation, action
    )


async def test_with_spectating_off_a_visible_table_refuses_a_game_updates_subscription(
    world: World,
) -> None:
    table_id = world.tables["PUBLIC", "INVITE_ONLY", False]
    query = GAME_UPDATES
    for relation in ("stranger", "spectator_link"):
        async with world.players[relation].subscribe(query, t=table_id) as updates:
            with pytest.raises(ApiError) as refused:
                await next_update(updates)
            assert refused.value.code == "FORBIDDEN"
    # The seated player still gets the game.
    async with world.players["seated"].subscribe(query, t=table_id) as updates:
        snapshot = (await next_update(updates))["gameUpdates"]
        assert snapshot["event"] == "SNAPSHOT" and snapshot["view"]["viewerSeat"] == "SOUTH"


async def test_every_join_policy_a_visibility_allows_is_in_the_matrix() -> None:
    allowed = {
        "PUBLIC": {"OPEN", "FRIENDS_ONLY", "INVITE_ONLY"},
        "FRIENDS_ONLY": {"FRIENDS_ONLY", "INVITE_ONLY"},
        "PRIVATE": {"INVITE_ONLY"},
    }
    covered = {(v, p) for v, p, _ in SPECTATING_ON}
    assert covered == {(v, p) for v, policies in allowed.items() for p in policies}
