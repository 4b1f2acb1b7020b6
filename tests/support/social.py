"""Social and table-access helpers for end-to-end tests: a player with the social
operations, and live lobby/notification streams that can tell "nothing arrived" from
"not yet arrived" without sleeping.

Both stream helpers use a marker: an event the test provokes on purpose after the
events under test. A subscription delivers its events in order, so once the marker
arrives everything published before it has arrived too; and a stream is known to be
live once a first marker got through.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from .client import GAME_FIELDS, TABLE_FIELDS, Api, next_update
from .server import LiveServer

PLAYER_FIELDS = "id username"
FRIEND_REQUEST_FIELDS = f"id from {{ {PLAYER_FIELDS} }} to {{ {PLAYER_FIELDS} }}"
INVITATION_FIELDS = f"id table {{ {TABLE_FIELDS} }} from {{ {PLAYER_FIELDS} }}"

GAME_UPDATES = (
    "subscription($t: ID!) { gameUpdates(tableId: $t) "
    f"{{ event seat view {{ {GAME_FIELDS} }} }} }}"
)
UPDATE_TABLE = (
    "mutation($t: ID!, $i: UpdateTableInput!) { updateTable(tableId: $t, input: $i) { id } }"
)
LOBBY_UPDATES = f"subscription {{ lobbyUpdates {{ event tableId table {{ {TABLE_FIELDS} }} }} }}"
NOTIFICATIONS = (
    "subscription { notifications { event "
    f"friendRequest {{ {FRIEND_REQUEST_FIELDS} }} "
    f"invitation {{ id table {{ id }} from {{ {PLAYER_FIELDS} }} }} "
    f"tableId player {{ {PLAYER_FIELDS} }} }} }}"
)

_markers = itertools.count(1)


class Social(Api):
    """A signed-in player with the social and host operations of the contract."""

    @classmethod
    async def signed_up(cls, server: LiveServer, username: str | None = None) -> Social:
        """A new account, signed in."""
        player = cls(server)
        await player.sign_up(username)
        return player

    @property
    def pid(self) -> str:
        """The player's id (signed up)."""
        assert self.player_id is not None
        return self.player_id

    @property
    def name(self) -> str:
        """The player's username (signed up)."""
        assert self.username is not None
        return self.username

    # ------------------------------------------------------------------ friends and blocks

    async def send_friend_request(self, username: str) -> dict[str, Any]:
        """sendFriendRequest."""
        data = await self.call(
            f"mutation($u: String!) {{ sendFriendRequest(username: $u) "
            f"{{ {FRIEND_REQUEST_FIELDS} }} }}",
            u=username,
        )
        return dict(data["sendFriendRequest"])

    async def respond(self, request_id: str, accept: bool) -> bool:
        """respondToFriendRequest."""
        data = await self.call(
            "mutation($r: ID!, $a: Boolean!) { respondToFriendRequest(requestId: $r, accept: $a) }",
            r=request_id,
            a=accept,
        )
        return bool(data["respondToFriendRequest"])

    async def remove_friend(self, player_id: str) -> bool:
        """removeFriend."""
        data = await self.call("mutation($p: ID!) { removeFriend(playerId: $p) }", p=player_id)
        return bool(data["removeFriend"])

    async def block(self, player_id: str) -> bool:
        """blockPlayer."""
        data = await self.call("mutation($p: ID!) { blockPlayer(playerId: $p) }", p=player_id)
        return bool(data["blockPlayer"])

    async def unblock(self, player_id: str) -> bool:
        """unblockPlayer."""
        data = await self.call("mutation($p: ID!) { unblockPlayer(playerId: $p) }", p=player_id)
        return bool(data["unblockPlayer"])

    async def blocked_players(self) -> list[dict[str, Any]]:
        """The `blockedPlayers` list."""
        data = await self.call(f"{{ blockedPlayers {{ {PLAYER_FIELDS} }} }}")
        return list(data["blockedPlayers"])

    async def friends(self) -> list[dict[str, Any]]:
        """The `friends` list."""
        data = await self.call(f"{{ friends {{ {PLAYER_FIELDS} }} }}")
        return list(data["friends"])

    async def friend_ids(self) -> set[str]:
        """The ids of the caller's friends."""
        return {p["id"] for p in await self.friends()}

    async def friend_requests(self) -> list[dict[str, Any]]:
        """The `friendRequests` list (incoming, pending)."""
        data = await self.call(f"{{ friendRequests {{ {FRIEND_REQUEST_FIELDS} }} }}")
        return list(data["friendRequests"])

    # ------------------------------------------------------------------ invitations and links

    async def invite(self, table_id: str, username: str) -> dict[str, Any]:
        """invitePlayer."""
        data = await self.call(
            f"mutation($t: ID!, $u: String!) {{ invitePlayer(tableId: $t, username: $u) "
            f"{{ {INVITATION_FIELDS} }} }}",
            t=table_id,
            u=username,
        )
        return dict(data["invitePlayer"])

    async def invitations(self) -> list[dict[str, Any]]:
        """The `invitations` list (pending, to the caller)."""
        data = await self.call(f"{{ invitations {{ {INVITATION_FIELDS} }} }}")
        return list(data["invitations"])

    async def decline(self, invitation_id: str) -> bool:
        """declineInvitation."""
        data = await self.call(
            "mutation($i: ID!) { declineInvitation(invitationId: $i) }", i=invitation_id
        )
        return bool(data["declineInvitation"])

    async def join_link(self, table_id: str) -> str:
        """createJoinLink: the code."""
        data = await self.call("mutation($t: ID!) { createJoinLink(tableId: $t) }", t=table_id)
        return str(data["createJoinLink"])

    async def spectator_link(self, table_id: str) -> str:
        """createSpectatorLink: the code."""
        data = await self.call("mutation($t: ID!) { createSpectatorLink(tableId: $t) }", t=table_id)
        return str(data["createSpectatorLink"])

    # ------------------------------------------------------------------ tables

    async def lobby(self, **filter: Any) -> list[dict[str, Any]]:
        """The `lobby` list, optionally filtered (openSeatsOnly, nameContains)."""
        data = await self.call(
            f"query($f: LobbyFilter) {{ lobby(filter: $f) {{ {TABLE_FIELDS} }} }}",
            f=filter or None,
        )
        return list(data["lobby"])

    async def lobby_ids(self, **filter: Any) -> set[str]:
        """The ids of the tables in the caller's lobby."""
        return {t["id"] for t in await self.lobby(**filter)}

    async def table(self, table_id: str, code: str | None = None) -> dict[str, Any]:
        """`table(id)` (with a link's code if given)."""
        data = await self.call(
            f"query($t: ID!, $c: String) {{ table(id: $t, code: $c) {{ {TABLE_FIELDS} }} }}",
            t=table_id,
            c=code,
        )
        return dict(data["table"])

    async def watch(self, table_id: str, code: str | None = None) -> dict[str, Any]:
        """watchTable."""
        data = await self.call(
            f"mutation($t: ID!, $c: String) {{ watchTable(tableId: $t, code: $c) "
            f"{{ {TABLE_FIELDS} }} }}",
            t=table_id,
            c=code,
        )
        return dict(data["watchTable"])

    async def update_table(self, table_id: str, **changes: Any) -> dict[str, Any]:
        """updateTable with the given input fields."""
        data = await self.call(
            f"mutation($t: ID!, $i: UpdateTableInput!) {{ updateTable(tableId: $t, input: $i) "
            f"{{ {TABLE_FIELDS} }} }}",
            t=table_id,
            i=changes,
        )
        return dict(data["updateTable"])

    async def transfer_host(self, table_id: str, player_id: str) -> dict[str, Any]:
        """transferHost."""
        data = await self.call(
            f"mutation($t: ID!, $p: ID!) {{ transferHost(tableId: $t, playerId: $p) "
            f"{{ {TABLE_FIELDS} }} }}",
            t=table_id,
            p=player_id,
        )
        return dict(data["transferHost"])

    async def kick(self, table_id: str, player_id: str) -> dict[str, Any]:
        """kickPlayer."""
        data = await self.call(
            f"mutation($t: ID!, $p: ID!) {{ kickPlayer(tableId: $t, playerId: $p) "
            f"{{ {TABLE_FIELDS} }} }}",
            t=table_id,
            p=player_id,
        )
        return dict(data["kickPlayer"])


async def befriend(a: Social, b: Social) -> None:
    """Make `a` and `b` friends (a asks, b accepts)."""
    request = await a.send_friend_request(b.name)
    assert await b.respond(request["id"], True)


def seat_of(table: dict[str, Any], player_id: str) -> str | None:
    """The seat `player_id` holds in a Table payload, if any."""
    return next((s["seat"] for s in table["seats"] if s["playerId"] == player_id), None)


# ---------------------------------------------------------------------------- lobby stream


class Beacon:
    """A PUBLIC table everybody sees, renamed to mark a point in every lobby stream."""

    def __init__(self, host: Social, table_id: str) -> None:
        self.host = host
        self.table_id = table_id

    @classmethod
    async def create(cls, server: LiveServer) -> Beacon:
        """A beacon table of a host of its own (no friends, no blocks)."""
        host = await Social.signed_up(server)
        table = await host.create_table(name="beacon")
        return cls(host, str(table["id"]))

    async def ping(self) -> str:
        """Rename the beacon table; the new name identifies this ping."""
        name = f"beacon {next(_markers)}"
        await self.host.update_table(self.table_id, name=name)
        return name


class LobbyStream:
    """A live lobbyUpdates subscription, read up to beacon pings."""

    def __init__(self, queue: asyncio.Queue[Any], beacon: Beacon) -> None:
        self.queue = queue
        self.beacon = beacon

    async def _until(self, name: str, timeout: float) -> list[dict[str, Any]]:
        events: list[dict[str, Any]] = []
        while True:
            update = dict((await next_update(self.queue, timeout))["lobbyUpdates"])
            if update["tableId"] != self.beacon.table_id:
                events.append(update)
            elif update["table"] is not None and update["table"]["name"] == name:
                return events

    async def sync(self) -> None:
        """Wait until the server-side subscription is live (a ping gets through)."""
        for _ in range(50):
            name = await self.beacon.ping()
            try:
                await self._until(name, 0.1)
                return
            except TimeoutError:
                continue
        raise AssertionError("the lobby subscription never went live")

    async def collect(self) -> list[dict[str, Any]]:
        """Every lobby update (beacon left out) that arrived before a new ping."""
        return await self._until(await self.beacon.ping(), 10.0)

    async def events_for(self, table_id: str) -> list[str]:
        """The events about `table_id` that arrived before a new ping."""
        return [e["event"] for e in await self.collect() if e["tableId"] == table_id]


@asynccontextmanager
async def lobby_stream(player: Api, beacon: Beacon) -> AsyncIterator[LobbyStream]:
    """A live lobbyUpdates subscription of `player`, synced before use."""
    async with player.subscribe(LOBBY_UPDATES) as queue:
        stream = LobbyStream(queue, beacon)
        await stream.sync()
        yield stream


# ---------------------------------------------------------------------------- notifications


class NotificationStream:
    """A live notifications subscription, read up to pings: a friend request from a
    dedicated pinger, declined once seen."""

    def __init__(self, queue: asyncio.Queue[Any], owner: Social, pinger: Social) -> None:
        self.queue = queue
        self.owner = owner
        self.pinger = pinger

    def _from_pinger(self, notice: dict[str, Any]) -> bool:
        request = notice.get("friendRequest")
        return request is not None and request["from"]["id"] == self.pinger.pid

    async def _until(self, request_id: str, timeout: float) -> list[dict[str, Any]]:
        notices: list[dict[str, Any]] = []
        while True:
            notice = dict((await next_update(self.queue, timeout))["notifications"])
            if not self._from_pinger(notice):
                notices.append(notice)
            elif (
                notice["friendRequest"]["id"] == request_id and notice["event"] == "FRIEND_REQUEST"
            ):
                await self.owner.respond(request_id, False)
                return notices

    async def sync(self) -> None:
        """Wait until the server-side subscription is live (a ping gets through)."""
        for _ in range(50):
            request = await self.pinger.send_friend_request(self.owner.name)
            try:
                await self._until(request["id"], 0.1)
                return
            except TimeoutError:
                continue
        raise AssertionError("the notifications subscription never went live")

    async def collect(self) -> list[dict[str, Any]]:
        """Every notification (pings left out) that arrived before a new ping."""
        request = await self.pinger.send_friend_request(self.owner.name)
        return await self._until(request["id"], 10.0)


@asynccontextmanager
async def notification_stream(owner: Social, pinger: Social) -> AsyncIterator[NotificationStream]:
    """A live notifications subscription of `owner`, synced before use."""
    async with owner.subscribe(NOTIFICATIONS) as queue:
        stream = NotificationStream(queue, owner, pinger)
        await stream.sync()
        yield stream
