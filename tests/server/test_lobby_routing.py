"""Live lobby routing: tables appear in and disappear from each subscriber's lobbyUpdates
as visibility, friendships and blocks change (docs/rules.md, Table access); join policy
following visibility; lobby filters."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import pytest_asyncio

from tests.support.server import LiveServer
from tests.support.social import UPDATE_TABLE, Beacon, Social, befriend, lobby_stream

pytestmark = pytest.mark.asyncio(loop_scope="module")

_names = itertools.count(1)


@dataclass
class World:
    host: Social
    stranger: Social
    friend: Social  # the host's friend
    beacon: Beacon


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def world(server: LiveServer) -> AsyncIterator[World]:
    host, stranger, friend = await asyncio.gather(
        *(Social.signed_up(server, name) for name in ("host", "stranger", "friend"))
    )
    await befriend(host, friend)
    yield World(host, stranger, friend, await Beacon.create(server))


async def fresh(server: LiveServer) -> Social:
    """A player of one test only."""
    return await Social.signed_up(server, f"solo{next(_names)}")


def sees(visibility: str, is_friend: bool) -> bool:
    """Whether a player with no seat, invitation or link sees a table (docs/rules.md)."""
    return visibility == "PUBLIC" or (visibility == "FRIENDS_ONLY" and is_friend)


def lobby_event(saw: bool, sees_now: bool) -> list[str]:
    """The lobby event a change makes for one subscriber."""
    if saw and sees_now:
        return ["TABLE_UPDATED"]
    if sees_now:
        return ["TABLE_CREATED"]
    if saw:
        return ["TABLE_REMOVED"]
    return []


TRANSITIONS = [
    ("PUBLIC", "FRIENDS_ONLY"),
    ("PUBLIC", "PRIVATE"),
    ("FRIENDS_ONLY", "PUBLIC"),
    ("FRIENDS_ONLY", "PRIVATE"),
    ("PRIVATE", "PUBLIC"),
    ("PRIVATE", "FRIENDS_ONLY"),
]


@pytest.mark.parametrize(
    ("before", "after"), TRANSITIONS, ids=[f"{a}->{b}" for a, b in TRANSITIONS]
)
async def test_changing_visibility_moves_the_table_in_and_out_of_live_lobbies_at_once(
    world: World, before: str, after: str
) -> None:
    async with (
        lobby_stream(world.stranger, world.beacon) as strangers,
        lobby_stream(world.friend, world.beacon) as friends,
    ):
        table = await world.host.create_table(visibility=before)
        updated = await world.host.update_table(table["id"], visibility=after)
        assert updated["visibility"] == after
        seen = {
            "stranger": (await strangers.collect(), False),
            "friend": (await friends.collect(), True),
        }
    for who, (events, is_friend) in seen.items():
        mine = [e for e in events if e["tableId"] == table["id"]]
        created = ["TABLE_CREATED"] if sees(before, is_friend) else []
        changed = lobby_event(sees(before, is_friend), sees(after, is_friend))
        assert [e["event"] for e in mine] == created + changed, who
        if changed and changed != ["TABLE_REMOVED"]:
            assert mine[-1]["table"]["visibility"] == after, who
        if changed == ["TABLE_REMOVED"]:
            assert mine[-1]["table"] is None, who
    # The lobby query agrees with the streams.
    assert (table["id"] in await world.stranger.lobby_ids()) == sees(after, False)
    assert (table["id"] in await world.friend.lobby_ids()) == sees(after, True)


async def test_a_new_friendship_shows_a_friends_only_table_and_ending_it_hides_it_at_once(
    server: LiveServer, world: World
) -> None:
    newcomer = await fresh(server)
    table = await world.host.create_table(visibility="FRIENDS_ONLY")
    async with lobby_stream(newcomer, world.beacon) as stream:
        assert await stream.events_for(table["id"]) == []
        await befriend(newcomer, world.host)
        assert await stream.events_for(table["id"]) == ["TABLE_CREATED"]
        assert await world.host.remove_friend(newcomer.pid)
        assert await stream.events_for(table["id"]) == ["TABLE_REMOVED"]
    assert table["id"] not in await newcomer.lobby_ids()


@pytest.mark.parametrize("blocker", ["host", "friend"])
async def test_a_block_either_way_hides_each_ones_friends_only_table_from_the_other_at_once(
    server: LiveServer, world: World, blocker: str
) -> None:
    host, friend = await fresh(server), await fresh(server)
    await befriend(host, friend)
    hosts_table = await host.create_table(visibility="FRIENDS_ONLY")
    friends_table = await friend.create_table(visibility="FRIENDS_ONLY")
    acting, other = (host, friend) if blocker == "host" else (friend, host)
    async with (
        lobby_stream(host, world.beacon) as hosts_stream,
        lobby_stream(friend, world.beacon) as friends_stream,
    ):
        assert await acting.block(other.pid)
        assert await friends_stream.events_for(hosts_table["id"]) == ["TABLE_REMOVED"]
        assert await hosts_stream.events_for(friends_table["id"]) == ["TABLE_REMOVED"]
        # Lifting the block does not bring the friendship (nor the tables) back...
        assert await acting.unblock(other.pid)
        assert await friends_stream.events_for(hosts_table["id"]) == []
        assert await hosts_stream.events_for(friends_table["id"]) == []
        # ...a new friendship does.
        await befriend(host, friend)
        assert await friends_stream.events_for(hosts_table["id"]) == ["TABLE_CREATED"]
        assert await hosts_stream.events_for(friends_table["id"]) == ["TABLE_CREATED"]


async def test_a_block_takes_away_an_invitation_and_with_it_a_private_table(
    server: LiveServer, world: World
) -> None:
    host, guest = await fresh(server), await fresh(server)
    table = await host.create_table(visibility="PRIVATE")
    async with lobby_stream(guest, world.beacon) as stream:
        await host.invite(table["id"], guest.name)
        assert await stream.events_for(table["id"]) == ["TABLE_CREATED"]
        assert await host.block(guest.pid)
        assert await stream.events_for(table["id"]) == ["TABLE_REMOVED"]
    assert await guest.invitations() == []
    assert await guest.error("query($t: ID!) { table(id: $t) { id } }", t=table["id"]) == (
        "NOT_FOUND"
    )


POLICY_AFTER_VISIBILITY = [
    # (created with, new visibility alone, the policy it then has)
    (("PUBLIC", "OPEN"), "FRIENDS_ONLY", "FRIENDS_ONLY"),
    (("PUBLIC", "OPEN"), "PRIVATE", "INVITE_ONLY"),
    (("PUBLIC", "FRIENDS_ONLY"), "FRIENDS_ONLY", "FRIENDS_ONLY"),
    (("PUBLIC", "FRIENDS_ONLY"), "PRIVATE", "INVITE_ONLY"),
    (("PUBLIC", "INVITE_ONLY"), "FRIENDS_ONLY", "INVITE_ONLY"),
    (("FRIENDS_ONLY", "FRIENDS_ONLY"), "PUBLIC", "FRIENDS_ONLY"),
    (("FRIENDS_ONLY", "FRIENDS_ONLY"), "PRIVATE", "INVITE_ONLY"),
    (("FRIENDS_ONLY", "INVITE_ONLY"), "PUBLIC", "INVITE_ONLY"),
    (("PRIVATE", "INVITE_ONLY"), "PUBLIC", "INVITE_ONLY"),
    (("PRIVATE", "INVITE_ONLY"), "FRIENDS_ONLY", "INVITE_ONLY"),
]


@pytest.mark.parametrize(
    ("created", "visibility", "policy"),
    POLICY_AFTER_VISIBILITY,
    ids=[f"{c[0]}/{c[1]}->{v}" for c, v, _ in POLICY_AFTER_VISIBILITY],
)
async def test_changing_visibility_alone_keeps_the_policy_if_allowed_else_the_most_open_allowed(
    world: World, created: tuple[str, str], visibility: str, policy: str
) -> None:
    table = await world.host.create_table(visibility=created[0], joinPolicy=created[1])
    updated = await world.host.update_table(table["id"], visibility=visibility)
    assert (updated["visibility"], updated["joinPolicy"]) == (visibility, policy)


@pytest.mark.parametrize(
    ("visibility", "policy"),
    [("PUBLIC", "OPEN"), ("FRIENDS_ONLY", "FRIENDS_ONLY"), ("PRIVATE", "INVITE_ONLY")],
)
async def test_a_table_created_without_a_join_policy_gets_the_most_open_one_allowed(
    world: World, visibility: str, policy: str
) -> None:
    table = await world.host.create_table(visibility=visibility)
    assert table["joinPolicy"] == policy


INCOMPATIBLE = [("FRIENDS_ONLY", "OPEN"), ("PRIVATE", "OPEN"), ("PRIVATE", "FRIENDS_ONLY")]


@pytest.mark.parametrize(("visibility", "policy"), INCOMPATIBLE)
async def test_an_explicit_incompatible_pair_is_refused_and_changes_nothing(
    world: World, visibility: str, policy: str
) -> None:
    create = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
    pair = {"visibility": visibility, "joinPolicy": policy}
    assert await world.host.error(create, i=pair) == "BAD_USER_INPUT"

    table = await world.host.create_table(visibility="PUBLIC", joinPolicy="OPEN", name="as is")
    update = UPDATE_TABLE
    assert await world.host.error(update, t=table["id"], i=pair) == "BAD_USER_INPUT"
    # Only the policy, incompatible with the visibility the table keeps:
    narrowed = await world.host.update_table(table["id"], visibility=visibility)
    only_policy = {"joinPolicy": policy, "name": "renamed"}
    assert await world.host.error(update, t=table["id"], i=only_policy) == "BAD_USER_INPUT"
    after = await world.host.table(table["id"])
    assert (after["name"], after["visibility"], after["joinPolicy"]) == (
        "as is",
        visibility,
        narrowed["joinPolicy"],
    )


async def test_lobby_filters_by_open_seats_and_by_a_case_insensitive_name_part(
    world: World,
) -> None:
    host = world.host
    waiting = await host.create_table(name="Quokka Den")
    other = await host.create_table(name="quokka lounge")
    unnamed = await host.create_table()
    full = await host.create_table(name="QUOKKA full")
    for seat in ("EAST", "SOUTH", "WEST"):
        await host.add_bot(full["id"], seat)
    ours = {waiting["id"], other["id"], unnamed["id"], full["id"]}

    async def listed(**filter: object) -> set[str]:
        return (await world.stranger.lobby_ids(**filter)) & ours

    assert await listed() == ours
    assert await listed(openSeatsOnly=True) == ours - {full["id"]}
    assert await listed(nameContains="qUoKkA") == ours - {unnamed["id"]}
    assert await listed(nameContains="den") == {waiting["id"]}
    assert await listed(nameContains="QUOKKA", openSeatsOnly=True) == {waiting["id"], other["id"]}
    assert await listed(nameContains="no such name") == set()
    open_seats = {t["id"]: t for t in await world.stranger.lobby(openSeatsOnly=True)}
    assert all(
        any(s["playerId"] is None for s in open_seats[i]["seats"]) for i in open_seats.keys() & ours
    )


async def test_an_invitee_who_sat_and_left_a_private_table_loses_it_from_the_live_lobby(
    server: LiveServer, world: World
) -> None:
    host, guest = await fresh(server), await fresh(server)
    table = await host.create_table(visibility="PRIVATE")
    await host.invite(table["id"], guest.name)
    async with lobby_stream(guest, world.beacon) as stream:
        await guest.join(table["id"], "EAST")  # sitting uses the invitation up
        assert await stream.events_for(table["id"]) == ["TABLE_UPDATED"]
        await guest.leave(table["id"])
        assert await stream.events_for(table["id"]) == ["TABLE_REMOVED"]
        # Later changes of the table no longer reach the former guest.
        await host.update_table(table["id"], name="after you left")
        assert await stream.events_for(table["id"]) == []
    assert table["id"] not in await guest.lobby_ids()
