"""Authorization review: for every query, mutation and subscription that touches a table or
another player, a stranger, a spectator and an opponent are refused what is not theirs,
with the contract's code, and nothing changes. Moves always act for the caller's own
seat, so "acting for another seat" is an opponent moving out of turn (NOT_YOUR_TURN);
no payload ever carries another seat's hand."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import build_schema

from tests.support.server import LiveServer, running

from .helpers import Gql, code_of, http_client, receive, subscribe, ws_connection

SCHEMA = build_schema((Path(__file__).resolve().parents[2] / "schema.graphql").read_text())

GAME = "tableId phase version viewerSeat handWithheld hand { suit rank } legalPlays { suit rank }"
TABLE = f"id host {{ id }} game {{ {GAME} }}"
MISSING_TABLE = "0123456789abcdef0123456789abcdef"
PASS_CARDS = (
    f"mutation($t: ID!, $c: [CardInput!]!) {{ passCards(tableId: $t, cards: $c) {{ {GAME} }} }}"
)
PLAY_CARD = f"mutation($t: ID!, $c: CardInput!) {{ playCard(tableId: $t, card: $c) {{ {GAME} }} }}"
GAME_UPDATES = f"subscription($t: ID!) {{ gameUpdates(tableId: $t) {{ event view {{ {GAME} }} }} }}"
CHAT_FIELDS = "id text from { id }"
CHAT = f"query($t: ID!) {{ chat(tableId: $t, channel: PLAYERS) {{ {CHAT_FIELDS} }} }}"
CHAT_MESSAGES = f"subscription($t: ID!) {{ chatMessages(tableId: $t) {{ {CHAT_FIELDS} }} }}"
SEND_CHAT = (
    "mutation($t: ID!, $c: ChatChannel!) "
    f'{{ sendChat(tableId: $t, channel: $c, text: "psst") {{ {CHAT_FIELDS} }} }}'
)

Card = tuple[str, str]


@dataclass
class Member:
    """One signed-up player of the world."""

    token: str
    id: str
    username: str


@dataclass
class World:
    """Players, tables and social ties set up once for the module."""

    server: LiveServer
    members: dict[str, Member] = field(default_factory=dict)
    tables: dict[str, str] = field(default_factory=dict)
    # table id -> player id -> the cards that player holds there
    hands: dict[str, dict[str, set[Card]]] = field(default_factory=dict)
    turn_player: dict[str, str] = field(default_factory=dict)  # table key -> member key
    friend_request: str = ""
    invitation: str = ""
    baseline: dict[str, Any] = field(default_factory=dict)

    def api(self, http: httpx.AsyncClient, key: str) -> Gql:
        """The HTTP client of one member."""
        member = self.members[key]
        return Gql(self.server, http, member.token, member.id, member.username)

    def cards_of(self, table: str, key: str) -> list[Card]:
        """The cards a member holds at a table, sorted."""
        return sorted(self.hands[self.tables[table]][self.members[key].id])


# The roles of the review, each a member of the world: "stranger" never sat nor watched
# anywhere; "spectator" watches the public tables; "opponent" sits EAST at the waiting
# table and WEST at the started ones, where NORTH (the host) and SOUTH (its partner) play
# against EAST (on turn) and WEST. "host" and "blocked" play the other party where only
# one party may act (answering a request, declining an invitation, a blocked sender).


# ---------------------------------------------------------------------------- the world


async def build_world(server: LiveServer) -> World:
    world = World(server)
    async with http_client() as http:
        for key in (
            "host",
            "partner",
            "east",
            "opponent",
            "spectator",
            "stranger",
            "invitee",
            "friend",
            "blocked",
        ):
            api = await Gql(server, http).sign_up()
            world.members[key] = Member(str(api.token), str(api.player_id), str(api.username))
        host = world.api(http, "host")

        async def create(key: str, **options: Any) -> str:
            data = await host.data(
                "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }", i=options
            )
            world.tables[key] = data["createTable"]["id"]
            return str(world.tables[key])

        async def join(key: str, table: str, seat: str) -> None:
            await world.api(http, key).data(
                "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }",
                t=table,
                s=seat,
            )

        waiting = await create("waiting", name="waiting")
        await join("opponent", waiting, "EAST")
        for key, seed in (("bidding", 101), ("playing", 202)):
            table = await create(key, name=key, seed=seed)
            for member, seat in (("east", "EAST"), ("partner", "SOUTH"), ("opponent", "WEST")):
                await join(member, table, seat)
        await create("private", name="private", visibility="PRIVATE")
        await create("closed", name="closed", spectating=False)
        for key in ("waiting", "bidding", "playing"):
            await world.api(http, "spectator").data(
                "mutation($t: ID!) { watchTable(tableId: $t) { id } }", t=world.tables[key]
            )

        seated = {"NORTH": "host", "EAST": "east", "SOUTH": "partner", "WEST": "opponent"}
        # Everyone bids 3 at the "playing" table, in turn, so that its play begins.
        playing = world.tables["playing"]
        while True:
            view = (
                await host.data(
                    f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} turn }} }}", t=playing
                )
            )["game"]
            if view["phase"] != "BIDDING":
                break
            await world.api(http, seated[view["turn"]]).data(
                "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 3}) "
                "{ version } }",
                t=playing,
            )
        for key in ("bidding", "playing"):
            table = world.tables[key]
            world.hands[table] = {}
            for member in seated.values():
                view = (
                    await world.api(http, member).data(
                        f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} turn }} }}", t=table
                    )
                )["game"]
                assert view["handWithheld"] is False
                world.hands[table][world.members[member].id] = {
                    (c["suit"], c["rank"]) for c in view["hand"]
                }
                world.turn_player[key] = seated[view["turn"]]
            assert world.turn_player[key] == "east", "the opponent must not be on turn"

        request = await host.data(
            "mutation($u: String!) { sendFriendRequest(username: $u) { id } }",
            u=world.members["partner"].username,
        )
        world.friend_request = request["sendFriendRequest"]["id"]
        await host.data(
            "mutation($u: String!) { sendFriendRequest(username: $u) { id } }",
            u=world.members["friend"].username,
        )
        incoming = await world.api(http, "friend").data("{ friendRequests { id } }")
        await world.api(http, "friend").data(
            "mutation($r: ID!) { respondToFriendRequest(requestId: $r, accept: true) }",
            r=incoming["friendRequests"][0]["id"],
        )
        await host.data(
            "mutation($p: ID!) { blockPlayer(playerId: $p) }", p=world.members["blocked"].id
        )
        invitation = await host.data(
            "mutation($t: ID!, $u: String!) { invitePlayer(tableId: $t, username: $u) { id } }",
            t=waiting,
            u=world.members["invitee"].username,
        )
        world.invitation = invitation["invitePlayer"]["id"]
        world.baseline = await fingerprint(world, http)
    return world


async def fingerprint(world: World, http: httpx.AsyncClient) -> dict[str, Any]:
    """Everything a refused request might have changed: every table as its host sees it,
    the pending friend request, the invitation, the friendship."""
    aliases = " ".join(
        f"{key}: table(id: {json.dumps(tid)}) {{ ...T }}" for key, tid in world.tables.items()
    )
    tables = await world.api(http, "host").data(
        f"query {{ {aliases} friends {{ id }} }}"
        " fragment T on Table { id name visibility joinPolicy spectating status openSeats"
        " host { id } seats { seat playerId isBot }"
        " game { version phase turn hand { suit rank } currentTrick { seat card { suit rank } }"
        " seats { seat bid { kind tricks } cardCount tricksWon } } }"
    )
    requests = await world.api(http, "partner").data("{ friendRequests { id from { id } } }")
    invitations = await world.api(http, "invitee").data("{ invitations { id table { id } } }")
    friends = await world.api(http, "friend").data("{ friends { id } }")
    return {**tables, **requests, **invitations, "friendsOfFriend": friends["friends"]}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """One server with the world built on it."""
    with running(tmp_path_factory.mktemp("authz") / "spades.db") as server:
        yield asyncio.run(build_world(server))


# ---------------------------------------------------------------------------- hands


def assert_no_foreign_cards(payload: Any, world: World, viewer: Member) -> None:
    """Every card inside a game view of `payload` is one the viewer holds at that table
    (no card has been played at the test tables, so no card is public)."""

    def walk(node: Any, table: str | None) -> None:
        if isinstance(node, dict):
            table = node.get("tableId", table)
            if "suit" in node and "rank" in node:
                own = world.hands.get(table or "", {}).get(viewer.id, set())
                assert (node["suit"], node["rank"]) in own, (
                    f"{viewer.username} was shown {node} at table {table}"
                )
            for value in node.values():
                walk(value, table)
        elif isinstance(node, list):
            for value in node:
                walk(value, table)

    walk(payload, None)


# ---------------------------------------------------------------------------- the review


Variables = Callable[[World, str], dict[str, Any]]


@dataclass(frozen=True)
class Case:
    """One operation a role may not perform, and the code that refuses it."""

    name: str
    field: str
    query: str
    table: str | None  # the world table it targets (its id is passed to `variables`)
    variables: Variables
    expected: dict[str, str]
    websocket: bool = False


def on_table(world: World, table: str) -> dict[str, Any]:
    return {"t": table}


def turn_card(world: World, table: str) -> dict[str, Any]:
    suit, rank = world.cards_of("playing", world.turn_player["playing"])[0]
    return {"t": table, "c": {"suit": suit, "rank": rank}}


def turn_pair(world: World, table: str) -> dict[str, Any]:
    cards = world.cards_of("bidding", world.turn_player["bidding"])[:2]
    return {"t": table, "c": [{"suit": s, "rank": r} for s, r in cards]}


def with_player(key: str) -> Variables:
    return lambda world, table: {"t": table, "p": world.members[key].id}


def player(key: str) -> Variables:
    return lambda world, _table: {"p": world.members[key].id}


def username(key: str) -> Variables:
    return lambda world, table: {"t": table, "u": world.members[key].username}


THREE = ("stranger", "spectator", "opponent")


def each(code: str, roles: tuple[str, ...] = THREE) -> dict[str, str]:
    return dict.fromkeys(roles, code)


CASES = [
    Case(
        "table of a private table, with a bogus link code",
        "table",
        f'query($t: ID!) {{ table(id: $t, code: "bogus") {{ {TABLE} }} }}',
        "private",
        on_table,
        each("NOT_FOUND"),
    ),
    Case(
        "game of a private table",
        "game",
        f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} }} }}",
        "private",
        on_table,
        each("NOT_FOUND"),
    ),
    Case(
        "game of a table closed to spectators",
        "game",
        f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} }} }}",
        "closed",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "gameRecord (every hand) before the game is over",
        "gameRecord",
        "query($t: ID!) { gameRecord(tableId: $t) }",
        "bidding",
        on_table,
        each("WRONG_PHASE"),
    ),
    Case(
        "joinTable on the host's seat",
        "joinTable",
        "mutation($t: ID!) { joinTable(tableId: $t, seat: NORTH) { id } }",
        "waiting",
        on_table,
        {"stranger": "SEAT_TAKEN", "spectator": "SEAT_TAKEN", "opponent": "ALREADY_SEATED"},
    ),
    Case(
        "joinTable on a started game",
        "joinTable",
        "mutation($t: ID!) { joinTable(tableId: $t, seat: NORTH) { id } }",
        "bidding",
        on_table,
        {"stranger": "TABLE_FULL", "spectator": "TABLE_FULL", "opponent": "ALREADY_SEATED"},
    ),
    Case(
        "addBot (host only)",
        "addBot",
        "mutation($t: ID!) { addBot(tableId: $t, seat: SOUTH) { id } }",
        "waiting",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "leaveTable without a seat",
        "leaveTable",
        "mutation($t: ID!) { leaveTable(tableId: $t) }",
        "bidding",
        on_table,
        each("FORBIDDEN", ("stranger", "spectator")),  # the opponent may leave its own seat
    ),
    Case(
        "revealHand",
        "revealHand",
        f"mutation($t: ID!) {{ revealHand(tableId: $t) {{ {GAME} }} }}",
        "bidding",
        on_table,
        {"stranger": "FORBIDDEN", "spectator": "FORBIDDEN", "opponent": "NOT_ELIGIBLE"},
    ),
    Case(
        "placeBid out of turn",
        "placeBid",
        "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: TRICKS, tricks: 4}) "
        f"{{ {GAME} }} }}",
        "bidding",
        on_table,
        {"stranger": "FORBIDDEN", "spectator": "FORBIDDEN", "opponent": "NOT_YOUR_TURN"},
    ),
    Case(
        "passCards with the bidder's cards",
        "passCards",
        PASS_CARDS,
        "bidding",
        turn_pair,
        {"stranger": "FORBIDDEN", "spectator": "FORBIDDEN", "opponent": "WRONG_PHASE"},
    ),
    Case(
        "playCard with the card of the seat on turn",
        "playCard",
        PLAY_CARD,
        "playing",
        turn_card,
        {"stranger": "FORBIDDEN", "spectator": "FORBIDDEN", "opponent": "NOT_YOUR_TURN"},
    ),
    Case(
        "sendFriendRequest to a player who blocked you",
        "sendFriendRequest",
        "mutation($u: String!) { sendFriendRequest(username: $u) { id } }",
        None,
        lambda world, _t: {"u": world.members["host"].username},
        {"blocked": "FORBIDDEN"},
    ),
    Case(
        "respondToFriendRequest to a request addressed to someone else",
        "respondToFriendRequest",
        "mutation($r: ID!) { respondToFriendRequest(requestId: $r, accept: true) }",
        None,
        lambda world, _t: {"r": world.friend_request},
        each("NOT_FOUND", (*THREE, "host")),  # the sender cannot accept its own request
    ),
    Case(
        "removeFriend of someone else's friend",
        "removeFriend",
        "mutation($p: ID!) { removeFriend(playerId: $p) }",
        None,
        player("friend"),
        each("NOT_FOUND"),
    ),
    Case(
        "unblockPlayer of someone else's block",
        "unblockPlayer",
        "mutation($p: ID!) { unblockPlayer(playerId: $p) }",
        None,
        player("blocked"),
        each("NOT_FOUND"),
    ),
    Case(
        "invitePlayer (host only)",
        "invitePlayer",
        "mutation($t: ID!, $u: String!) { invitePlayer(tableId: $t, username: $u) { id } }",
        "waiting",
        username("friend"),
        each("FORBIDDEN"),
    ),
    Case(
        "declineInvitation addressed to someone else",
        "declineInvitation",
        "mutation($i: ID!) { declineInvitation(invitationId: $i) }",
        None,
        lambda world, _t: {"i": world.invitation},
        each("NOT_FOUND", (*THREE, "host")),  # nor may the inviter decline for the invitee
    ),
    Case(
        "createJoinLink (host only)",
        "createJoinLink",
        "mutation($t: ID!) { createJoinLink(tableId: $t) }",
        "waiting",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "createSpectatorLink (host only)",
        "createSpectatorLink",
        "mutation($t: ID!) { createSpectatorLink(tableId: $t) }",
        "waiting",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "watchTable of a table closed to spectators",
        "watchTable",
        f"mutation($t: ID!) {{ watchTable(tableId: $t) {{ {TABLE} }} }}",
        "closed",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "watchTable of a private table, with a bogus link code",
        "watchTable",
        f'mutation($t: ID!) {{ watchTable(tableId: $t, code: "bogus") {{ {TABLE} }} }}',
        "private",
        on_table,
        each("NOT_FOUND"),
    ),
    Case(
        "updateTable (host only)",
        "updateTable",
        'mutation($t: ID!) { updateTable(tableId: $t, input: {name: "mine", spectating: false})'
        " { id } }",
        "waiting",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "transferHost to oneself (host only)",
        "transferHost",
        "mutation($t: ID!, $p: ID!) { transferHost(tableId: $t, playerId: $p) { id } }",
        "waiting",
        with_player("opponent"),
        each("FORBIDDEN"),
    ),
    Case(
        "kickPlayer of the host (host only)",
        "kickPlayer",
        "mutation($t: ID!, $p: ID!) { kickPlayer(tableId: $t, playerId: $p) { id } }",
        "waiting",
        with_player("host"),
        each("FORBIDDEN"),
    ),
    Case(
        "presence of a private table",
        "presence",
        "query($t: ID!) { presence(tableId: $t) { seat connected } }",
        "private",
        on_table,
        each("NOT_FOUND"),
    ),
    Case(
        "presence of a table closed to spectators",
        "presence",
        "query($t: ID!) { presence(tableId: $t) { seat connected } }",
        "closed",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "reclaimSeat by someone who is not the seat's away player",
        "reclaimSeat",
        "mutation($t: ID!) { reclaimSeat(tableId: $t) { id } }",
        "playing",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "presenceUpdates of a private table",
        "presenceUpdates",
        "subscription($t: ID!) { presenceUpdates(tableId: $t) { seat connected } }",
        "private",
        on_table,
        each("NOT_FOUND"),
        websocket=True,
    ),
    Case(
        "presenceUpdates of a table closed to spectators",
        "presenceUpdates",
        "subscription($t: ID!) { presenceUpdates(tableId: $t) { seat connected } }",
        "closed",
        on_table,
        each("FORBIDDEN"),
        websocket=True,
    ),
    Case(
        "gameUpdates of a private table",
        "gameUpdates",
        GAME_UPDATES,
        "private",
        on_table,
        each("NOT_FOUND"),
        websocket=True,
    ),
    Case(
        "gameUpdates of a table closed to spectators",
        "gameUpdates",
        GAME_UPDATES,
        "closed",
        on_table,
        each("FORBIDDEN"),
        websocket=True,
    ),
]

CASES += [
    Case(
        "chat of a private table",
        "chat",
        CHAT,
        "private",
        on_table,
        each("NOT_FOUND"),
    ),
    Case(
        "chat of a table closed to spectators",
        "chat",
        CHAT,
        "closed",
        on_table,
        each("FORBIDDEN"),
    ),
    Case(
        "sendChat to a private table",
        "sendChat",
        SEND_CHAT,
        "private",
        lambda world, table: {"t": table, "c": "PLAYERS"},
        each("NOT_FOUND"),
    ),
    Case(
        "sendChat to the players' channel without a seat",
        "sendChat",
        SEND_CHAT,
        "bidding",
        lambda world, table: {"t": table, "c": "PLAYERS"},
        each("FORBIDDEN", ("stranger", "spectator")),
    ),
    Case(
        "sendChat to the spectators' channel from a seat",
        "sendChat",
        SEND_CHAT,
        "bidding",
        lambda world, table: {"t": table, "c": "SPECTATORS"},
        {"opponent": "FORBIDDEN"},
    ),
    Case(
        "chatMessages of a private table",
        "chatMessages",
        CHAT_MESSAGES,
        "private",
        on_table,
        each("NOT_FOUND"),
        websocket=True,
    ),
    Case(
        "chatMessages of a table closed to spectators",
        "chatMessages",
        CHAT_MESSAGES,
        "closed",
        on_table,
        each("FORBIDDEN"),
        websocket=True,
    ),
    Case(
        "requestRematch before the game is over",
        "requestRematch",
        f"mutation($t: ID!) {{ requestRematch(tableId: $t) {{ {TABLE} }} }}",
        "bidding",
        on_table,
        {"stranger": "FORBIDDEN", "spectator": "FORBIDDEN", "opponent": "WRONG_PHASE"},
    ),
    # Moderator operations: every role of the world is a PLAYER (FORBIDDEN before anything
    # else, even for an unknown id; tests/moderation/ covers moderators themselves).
    Case(
        "reports (the moderators' queue)",
        "reports",
        "{ reports { edges { node { id note } } } }",
        None,
        lambda world, _table: {},
        each("FORBIDDEN"),
    ),
    Case(
        "sanctions of the host",
        "sanctions",
        "query($p: ID!) { sanctions(playerId: $p) { id reason } }",
        None,
        player("host"),
        each("FORBIDDEN"),
    ),
    Case(
        "resolveReport of an unknown report",
        "resolveReport",
        "mutation($r: ID!) { resolveReport(reportId: $r, status: DISMISSED) { id } }",
        None,
        lambda world, _table: {"r": MISSING_TABLE},
        each("FORBIDDEN"),
    ),
    Case(
        "mutePlayer the host",
        "mutePlayer",
        'mutation($p: ID!) { mutePlayer(playerId: $p, minutes: 5, reason: "x") { id } }',
        None,
        player("host"),
        each("FORBIDDEN"),
    ),
    Case(
        "banPlayer the host",
        "banPlayer",
        'mutation($p: ID!) { banPlayer(playerId: $p, reason: "x") { id } }',
        None,
        player("host"),
        each("FORBIDDEN"),
    ),
    Case(
        "liftSanction of an unknown sanction",
        "liftSanction",
        "mutation($s: ID!) { liftSanction(sanctionId: $s) { id } }",
        None,
        lambda world, _table: {"s": MISSING_TABLE},
        each("FORBIDDEN"),
    ),
    Case(
        "hideChatMessage of an unknown message",
        "hideChatMessage",
        "mutation($m: ID!) { hideChatMessage(messageId: $m) }",
        None,
        lambda world, _table: {"m": MISSING_TABLE},
        each("FORBIDDEN"),
    ),
]

# Operations that touch only the caller's own account or lists, each with where it is
# covered instead.
OWN_ONLY = {
    "me": "the caller itself",
    "lobby": "test_no_payload_ever_contains_another_seats_hand (visible tables only)",
    "friends": "test_lists_show_only_the_callers_own",
    "blockedPlayers": "test_lists_show_only_the_callers_own",
    "friendRequests": "test_lists_show_only_the_callers_own",
    "invitations": "test_lists_show_only_the_callers_own",
    "signUp": "creates the caller's own account",
    "signIn": "test_tokens.py (no username enumeration)",
    "signOut": "test_tokens.py (revokes the caller's own token)",
    "createTable": "creates a table the caller hosts",
    "blockPlayer": "changes the caller's own block list only",
    "lobbyUpdates": "test_lobby_updates_never_show_a_table_the_subscriber_may_not_see",
    "notifications": "test_notifications_reach_only_their_addressee",
    "serverTime": "the server's clock, the same for everyone",
    # Public to every signed-in player, except between players who blocked each other.
    "profile": "tests/server/test_career_pages.py (blocked either way: null)",
    "leaderboard": "tests/server/test_career_pages.py (blocked either way: hidden)",
    "myRole": "the caller's own role",
    "myMute": "the caller's own mute",
    "reportPlayer": "tests/moderation/test_reports.py (only a message the reporter could read)",
    # Quick play acts on the caller's own tickets only.
    "quickPlay": "tests/server/test_quickplay.py (a ticket is its owner's alone)",
    "quickPlaySearching": "a count, the same for everyone",
    "startQuickPlay": "starts the caller's own ticket",
    "cancelQuickPlay": "tests/server/test_quickplay.py (a ticket is its owner's alone)",
    "quickPlayUpdates": "tests/server/test_quickplay.py (a ticket is its owner's alone)",
}


async def perform(
    world: World, http: httpx.AsyncClient, case: Case, actor: str, table: str
) -> dict[str, Any]:
    """Run a case's operation as one member; its answer (a subscription's first message)."""
    variables = case.variables(world, table)
    member = world.members[actor]
    if not case.websocket:
        return await world.api(http, actor).post(case.query, **variables)
    async with ws_connection(world.server, member.token) as socket:
        assert (await receive(socket))["type"] == "connection_ack"
        await subscribe(socket, "1", case.query, **variables)
        message = await receive(socket)
        assert message["type"] == "next", message
        return dict(message["payload"])


@pytest.mark.parametrize(
    ("case", "role"),
    [(case, role) for case in CASES for role in case.expected],
    ids=[f"{case.name} as {role}" for case in CASES for role in case.expected],
)
async def test_a_role_is_refused_what_is_not_its_own_and_nothing_changes(
    world: World, case: Case, role: str
) -> None:
    actor = role
    async with http_client() as http:
        table = world.tables[case.table] if case.table else ""
        answer = await perform(world, http, case, actor, table)
        assert code_of(answer) == case.expected[role], answer
        assert not any((answer.get("data") or {}).values()), answer
        assert "Internal" not in json.dumps(answer)
        assert_no_foreign_cards(answer, world, world.members[actor])
        assert await fingerprint(world, http) == world.baseline


def test_the_review_covers_every_operation_of_the_schema() -> None:
    operations = {
        name
        for root in (SCHEMA.query_type, SCHEMA.mutation_type, SCHEMA.subscription_type)
        if root is not None
        for name in root.fields
    }
    reviewed = {case.field for case in CASES}
    assert operations - reviewed - OWN_ONLY.keys() == set()
    assert (reviewed | OWN_ONLY.keys()) - operations == set()  # nothing stale


TABLE_CASES = [case for case in CASES if case.table is not None]


@pytest.mark.parametrize("case", TABLE_CASES, ids=[case.name for case in TABLE_CASES])
async def test_a_private_table_answers_a_stranger_exactly_as_a_missing_one(
    world: World, case: Case
) -> None:
    async with http_client() as http:
        private = await perform(world, http, case, "stranger", world.tables["private"])
        missing = await perform(world, http, case, "stranger", MISSING_TABLE)
    assert code_of(private) == "NOT_FOUND"
    assert private["errors"][0]["message"] == missing["errors"][0]["message"]
    assert code_of(missing) == "NOT_FOUND"


# ---------------------------------------------------------------------------- reading


async def test_no_payload_ever_contains_another_seats_hand(world: World) -> None:
    public = [world.tables[key] for key in ("waiting", "bidding", "playing")]
    reads = [f"{{ lobby {{ {TABLE} }} }}", f"{{ invitations {{ table {{ {TABLE} }} }} }}"]
    for table in public:
        reads.append(f"{{ table(id: {json.dumps(table)}) {{ {TABLE} }} }}")
        reads.append(f"{{ game(tableId: {json.dumps(table)}) {{ {GAME} }} }}")
    async with http_client() as http:
        for key, member in world.members.items():
            api = world.api(http, key)
            for query in reads:
                answer = await api.post(query)
                assert_no_foreign_cards(answer, world, member)
            for table in public[1:]:
                async with ws_connection(world.server, member.token) as socket:
                    assert (await receive(socket))["type"] == "connection_ack"
                    await subscribe(
                        socket,
                        "1",
                        GAME_UPDATES,
                        t=table,
                    )
                    assert_no_foreign_cards(await receive(socket), world, member)
        # The positive side: a seat sees exactly its own hand; a spectator none.
        for key in ("host", "opponent"):
            view = (
                await world.api(http, key).data(
                    f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} }} }}", t=public[2]
                )
            )["game"]
            assert sorted((c["suit"], c["rank"]) for c in view["hand"]) == world.cards_of(
                "playing", key
            )
        watched = (
            await world.api(http, "spectator").data(
                f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} }} }}", t=public[2]
            )
        )["game"]
        assert watched["hand"] is None and watched["legalPlays"] == []
        assert watched["viewerSeat"] is None


async def test_lists_show_only_the_callers_own(world: World) -> None:
    async with http_client() as http:
        for key in ("host", "stranger", "spectator", "opponent", "partner"):
            lists = await world.api(http, key).data(
                "{ invitations { id } friendRequests { id } friends { id } blockedPlayers { id } }"
            )
            assert world.invitation not in [i["id"] for i in lists["invitations"]]
            expected = [world.friend_request] if key == "partner" else []
            assert [r["id"] for r in lists["friendRequests"]] == expected
            friends = [f["id"] for f in lists["friends"]]
            assert friends == ([world.members["friend"].id] if key == "host" else [])
            blocked = [b["id"] for b in lists["blockedPlayers"]]
            assert blocked == ([world.members["blocked"].id] if key == "host" else [])
        invited = await world.api(http, "invitee").data("{ invitations { id from { id } } }")
        assert invited["invitations"] == [
            {"id": world.invitation, "from": {"id": world.members["host"].id}}
        ]


async def test_a_refused_move_never_moves_another_seat(world: World) -> None:
    """The opponent tries the card of the seat on turn: refused, and that seat still holds
    it; then the seat on turn plays the same card itself."""
    playing = world.tables["playing"]
    variables = turn_card(world, playing)
    query = PLAY_CARD
    async with http_client() as http:
        refused = await world.api(http, "opponent").post(query, **variables)
        assert code_of(refused) == "NOT_YOUR_TURN"
        owner = world.api(http, world.turn_player["playing"])
        view = (
            await owner.data(f"query($t: ID!) {{ game(tableId: $t) {{ {GAME} }} }}", t=playing)
        )["game"]
        assert variables["c"] in view["hand"]
        played = (await owner.data(query, **variables))["playCard"]
        assert variables["c"] not in played["hand"]
        assert played["version"] > view["version"]


# ---------------------------------------------------------------------------- live streams


async def first_message(socket: Any, timeout: float) -> dict[str, Any] | None:
    try:
        return await receive(socket, timeout)
    except TimeoutError:
        return None


async def test_notifications_reach_only_their_addressee(world: World) -> None:
    async with http_client() as http:
        newcomer = await Gql(world.server, http).sign_up()
        listen = "subscription { notifications { event friendRequest { from { id } } } }"
        async with (
            ws_connection(world.server, newcomer.token) as addressee,
            ws_connection(world.server, world.members["stranger"].token) as bystander,
        ):
            for socket in (addressee, bystander):
                assert (await receive(socket))["type"] == "connection_ack"
                await subscribe(socket, "n", listen)
            await asyncio.sleep(0.5)
            await world.api(http, "host").data(
                "mutation($u: String!) { sendFriendRequest(username: $u) { id } }",
                u=newcomer.username,
            )
            got = await receive(addressee)
            assert got["payload"]["data"]["notifications"]["event"] == "FRIEND_REQUEST"
            assert await first_message(bystander, 1.0) is None


async def test_lobby_updates_never_show_a_table_the_subscriber_may_not_see(
    world: World,
) -> None:
    async with http_client() as http:
        host = world.api(http, "host")
        listen = "subscription { lobbyUpdates { event tableId table { id visibility } } }"
        async with ws_connection(world.server, world.members["stranger"].token) as socket:
            assert (await receive(socket))["type"] == "connection_ack"
            await subscribe(socket, "l", listen)
            await asyncio.sleep(0.5)
            create = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
            await host.data(create, i={"visibility": "PRIVATE"})
            await host.data(create, i={"visibility": "FRIENDS_ONLY"})
            public = (await host.data(create, i={"visibility": "PUBLIC"}))["createTable"]["id"]
            update = (await receive(socket))["payload"]["data"]["lobbyUpdates"]
            assert (update["event"], update["tableId"]) == ("TABLE_CREATED", public)
