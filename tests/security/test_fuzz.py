"""Fuzzing: thousands of random but well-formed GraphQL operations, built from the
schema's own operations, with random variable values (wrong types, huge numbers, unicode,
nulls, unknown enum values, deep nesting), sent by random callers at one live server
with games in play. No answer may be an internal error or a traceback, every error has a
message, and afterwards every table's move log, replayed through the engine, reproduces
the game state the server stored."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import string
from collections.abc import Iterator
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    build_schema,
)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from websockets.asyncio.client import ClientConnection

from app.api.transport.refusals import RefusalCode
from app.rules.game import Game
from app.rules.movelog import entry_move
from app.rules.serialize import game_to_data
from tests.support.server import LiveServer, running

from .helpers import PASSWORD, Gql, ws_connection

SCHEMA = build_schema((Path(__file__).resolve().parents[2] / "schema.graphql").read_text())
ROOTS: dict[str, GraphQLObjectType] = {
    kind: root
    for kind, root in (
        ("query", SCHEMA.query_type),
        ("mutation", SCHEMA.mutation_type),
        ("subscription", SCHEMA.subscription_type),
    )
    if root is not None
}
# About 35 ms an example on a busy two-core machine (an operation, and every third example
# a legal move of two or three requests): about a minute in all.
EXAMPLES = int(os.environ.get("SPADES_FUZZ_EXAMPLES", "1500"))
CODES = {
    "UNAUTHENTICATED",
    "FORBIDDEN",
    "NOT_FOUND",
    "BAD_USER_INPUT",
    "NOT_YOUR_TURN",
    "WRONG_PHASE",
    "ILLEGAL_PLAY",
    "CARD_NOT_IN_HAND",
    "INVALID_BID",
    "NOT_ELIGIBLE",
    "SEAT_TAKEN",
    "ALREADY_SEATED",
    "TABLE_FULL",
    "CONFLICT",
    "RATE_LIMITED",
    # Refusals before execution (docs/api.md, "Transport").
    *(code.value for code in RefusalCode),
}
FORBIDDEN_TEXT = ("Internal server error", "Traceback", "Internal Server Error")
HUGE_INTS = [2**31 - 1, 2**31, -(2**31) - 1, 2**53 + 1, 2**63, -(2**64), 10**40]
ODD_TEXT = [
    "",
    " ",
    "\u0000",
    "\u200b",
    "\u202e",
    "🂡🂱",
    "名前",
    "a" * 300,
    "x" * 5_000,
    "'; DROP TABLE players; --",
    "<script>",
    "%s%n",
    "../../etc/passwd",
    "bot:north",
]
PLAYERS = ("north", "east", "south", "west", "stranger")


@dataclass
class Pools:
    """Values the fuzzer has seen, to hit real objects as well as made-up ones."""

    tables: list[str] = field(default_factory=list)
    players: list[str] = field(default_factory=list)
    usernames: list[str] = field(default_factory=list)
    other_ids: list[str] = field(default_factory=list)
    codes: list[str] = field(default_factory=list)

    def learn(self, data: Any) -> None:
        """Remember ids and link codes found in an answer's data (bounded)."""
        if isinstance(data, dict):
            for key, value in data.items():
                if key in ("id", "tableId", "playerId") and isinstance(value, str):
                    if value not in self.other_ids and len(self.other_ids) < 300:
                        self.other_ids.append(value)
                elif key in ("createJoinLink", "createSpectatorLink") and isinstance(value, str):
                    self.codes.append(value)
                else:
                    self.learn(value)
        elif isinstance(data, list):
            for value in data:
                self.learn(value)


@dataclass
class Arena:
    """The live server, its seeded players and tables, one loop and one HTTP client."""

    server: LiveServer
    loop: asyncio.AbstractEventLoop
    http: httpx.AsyncClient
    tokens: dict[str, str]
    ids: dict[str, str]
    spare_tokens: list[str]
    pools: Pools
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)
    sockets: dict[str, ClientConnection] = field(default_factory=dict)
    live: dict[str, str] = field(default_factory=dict)  # caller -> its open subscription
    received: list[str] = field(default_factory=list)
    sent: int = 0
    informed_moves: int = 0

    def run(self, awaitable: Any) -> Any:
        """Run a coroutine on the arena's loop."""
        return self.loop.run_until_complete(awaitable)


# ---------------------------------------------------------------------------- setup


async def seed(server: LiveServer, http: httpx.AsyncClient) -> tuple[dict[str, str], ...]:
    tokens: dict[str, str] = {}
    ids: dict[str, str] = {}
    names: dict[str, str] = {}
    for player in PLAYERS:
        api = await Gql(server, http).sign_up()
        tokens[player], ids[player], names[player] = (
            str(api.token),
            str(api.player_id),
            str(api.username),
        )
    north = Gql(server, http, tokens["north"])
    create = "mutation($i: CreateTableInput!) { createTable(input: $i) { id } }"
    sit = "mutation($t: ID!, $s: Seat!) { joinTable(tableId: $t, seat: $s) { id } }"
    bot = "mutation($t: ID!, $s: Seat!) { addBot(tableId: $t, seat: $s) { id } }"
    tables: dict[str, str] = {}
    tables["humans"] = (await north.data(create, i={"name": "humans", "seed": 7}))["createTable"][
        "id"
    ]
    for player, seat in (("east", "EAST"), ("south", "SOUTH"), ("west", "WEST")):
        await Gql(server, http, tokens[player]).data(sit, t=tables["humans"], s=seat)
    tables["bots"] = (await north.data(create, i={"name": "bots"}))["createTable"]["id"]
    for seat in ("EAST", "SOUTH", "WEST"):
        await north.data(bot, t=tables["bots"], s=seat)
    east = Gql(server, http, tokens["east"])
    tables["mixed"] = (await east.data(create, i={"name": "mixed", "seed": 9}))["createTable"]["id"]
    await Gql(server, http, tokens["west"]).data(sit, t=tables["mixed"], s="WEST")
    for seat in ("EAST", "SOUTH"):  # the creator sits NORTH
        await east.data(bot, t=tables["mixed"], s=seat)
    tables["waiting"] = (await east.data(create, i={"name": "waiting"}))["createTable"]["id"]
    tables["private"] = (
        await Gql(server, http, tokens["south"]).data(create, i={"visibility": "PRIVATE"})
    )["createTable"]["id"]
    return tokens, ids, names, tables


@pytest.fixture(scope="module")
def arena(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Arena]:
    """A server with three games in play (humans only, one human and bots, two humans and
    bots), a waiting table and a private one."""
    with running(tmp_path_factory.mktemp("fuzz") / "spades.db") as server:
        loop = asyncio.new_event_loop()
        http = loop.run_until_complete(_client())
        tokens, ids, names, tables = loop.run_until_complete(seed(server, http))
        spares = [
            loop.run_until_complete(
                Gql(server, http).data(
                    "mutation($u: String!, $p: String!) { signIn(username: $u, password: $p) "
                    "{ token } }",
                    u=names["stranger"],
                    p=PASSWORD,
                )
            )["signIn"]["token"]
            for _ in range(30)
        ]
        pools = Pools(
            tables=list(tables.values()),
            players=[*ids.values(), "bot:north", "bot:east"],
            usernames=list(names.values()),
        )
        arena = Arena(server, loop, http, tokens, ids, spares, pools)
        try:
            yield arena
        finally:
            loop.run_until_complete(arena.stack.aclose())
            loop.run_until_complete(http.aclose())
            loop.close()


async def _client() -> httpx.AsyncClient:
    return httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_keepalive_connections=4))


# ---------------------------------------------------------------------------- strategies


def pick(pool: list[str]) -> st.SearchStrategy[str]:
    """An element of a pool that may grow while the fuzzer runs."""
    return st.integers(0, 10**6).map(lambda i: pool[i % len(pool)] if pool else "none")


def rarely(
    strategy: st.SearchStrategy[Any], common: st.SearchStrategy[Any], odds: int
) -> st.SearchStrategy[Any]:
    """`common`, and about once in `odds + 1` draws `strategy`. (Not `one_of`: it would
    merge the repeated branches.)"""
    flags = st.sampled_from([False] * (odds // 2) + [True] + [False] * (odds - odds // 2))

    @st.composite
    def choose(draw: st.DrawFn) -> Any:
        return draw(strategy if draw(flags) else common)

    return choose()


JSON_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
)
ANY_JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _nest(depth: int, as_list: bool) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if as_list else {"a": value}
    return value


DEEPLY_NESTED = st.builds(_nest, st.integers(20, 200), st.booleans())
TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(ODD_TEXT),
    st.text(alphabet=st.characters(codec="utf-8"), max_size=20),
)
WRONG = st.one_of(ANY_JSON, DEEPLY_NESTED, st.sampled_from(HUGE_INTS))
INTS = st.one_of(
    st.integers(-3, 20),
    st.integers(-3, 20),
    st.integers(-3, 20),
    st.sampled_from(HUGE_INTS),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["3", "", True]),
)
BOOLEANS = st.one_of(st.booleans(), st.booleans(), st.booleans(), st.sampled_from(["true", 1]))
UNKNOWN_ENUMS = st.sampled_from(["JOKER", "north", "", "NORTH ", "0", "null"])


class Values:
    """Strategies for variable values of each input type, built once."""

    def __init__(self, pools: Pools) -> None:
        self.pools = pools
        self._cache: dict[tuple[str, str], st.SearchStrategy[Any]] = {}

    def of(self, kind: GraphQLInputType, arg_name: str) -> st.SearchStrategy[Any]:
        """Mostly well-typed (often real) values; sometimes null, mistyped, huge, unknown
        enum values, or nested deeply."""
        key = (type_text(kind), arg_name)
        if key not in self._cache:
            self._cache[key] = self._build(kind, arg_name)
        return self._cache[key]

    def _build(self, kind: GraphQLInputType, arg_name: str) -> st.SearchStrategy[Any]:
        if isinstance(kind, GraphQLNonNull):
            return rarely(st.one_of(st.none(), WRONG), self.of(kind.of_type, arg_name), 10)
        if isinstance(kind, GraphQLList):
            element = self.of(kind.of_type, arg_name)
            odd = st.one_of(
                st.lists(element, min_size=40, max_size=60),
                element,  # a single value where a list is expected (input coercion)
                st.none(),
                WRONG,
            )
            return rarely(odd, st.lists(element, max_size=4), 6)
        if isinstance(kind, GraphQLEnumType):
            odd = st.one_of(UNKNOWN_ENUMS, st.none(), WRONG)
            return rarely(odd, st.sampled_from(sorted(kind.values)), 8)
        if isinstance(kind, GraphQLInputObjectType):
            members = {name: self.of(m.type, name) for name, m in kind.fields.items()}
            common = st.one_of(
                st.fixed_dictionaries(members),
                st.fixed_dictionaries({}, optional=members),
            )
            odd = st.one_of(
                st.fixed_dictionaries(members).map(lambda d: {**d, "unknownField": 1}),
                st.none(),
                WRONG,
            )
            return rarely(odd, common, 8)
        assert isinstance(kind, GraphQLScalarType)
        if kind.name == "Int":
            return rarely(st.none(), INTS, 10)
        if kind.name == "Boolean":
            return rarely(st.none(), BOOLEANS, 10)
        pools = self.pools
        real: st.SearchStrategy[Any] = TEXT
        if arg_name in ("tableId", "id"):
            real = pick(pools.tables)
        elif arg_name == "playerId":
            real = pick(pools.players)
        elif arg_name == "username":
            real = pick(pools.usernames)
        elif arg_name in ("requestId", "invitationId"):
            real = pick(pools.other_ids)
        elif arg_name == "code":
            real = pick(pools.codes) | TEXT
        elif arg_name == "password":
            real = st.sampled_from([PASSWORD, "short", "p" * 300]) | TEXT
        return rarely(st.one_of(TEXT, st.integers(), st.none(), WRONG), real, 6)


def literal(value: Any) -> str:
    """A GraphQL literal for a JSON value (strings quoted, enum-like names bare)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if value and value.isupper() and value.replace("_", "").isalpha():
            return value  # an enum value, known or not
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(literal(v) for v in value) + "]"
    fields = ", ".join(
        f"{key}: {literal(v)}"
        for key, v in value.items()
        if key and key[0] in string.ascii_letters + "_" and key.isidentifier()
    )
    return "{" + fields + "}"


def type_text(kind: Any) -> str:
    """The SDL spelling of a type reference."""
    if isinstance(kind, GraphQLNonNull):
        return type_text(kind.of_type) + "!"
    if isinstance(kind, GraphQLList):
        return "[" + type_text(kind.of_type) + "]"
    return str(kind.name)


def named(kind: Any) -> Any:
    """The named type under list and non-null wrappers."""
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        kind = kind.of_type
    return kind


NONSENSE = st.sampled_from(
    [""] * 60
    + [
        "bogusField",
        "__typename",
        "... { __typename }",
        "deep { deep { deep { deep { deep { deep { deep { x } } } } } } }",
        "d { " * 40 + "x" + " }" * 40,
        "me { id }",
    ]
)
ALIASED = st.sampled_from([False] * 6 + [True])
FIELD_COUNTS = st.integers(1, 4)


@st.composite
def selections(draw: st.DrawFn, kind: GraphQLOutputType, depth: int = 0) -> str:
    """A selection set for an output type: random fields, some nested."""
    target = named(kind)
    if not isinstance(target, GraphQLObjectType):
        return ""
    names = sorted(target.fields)
    chosen = {draw(st.sampled_from(names)) for _ in range(draw(FIELD_COUNTS))}
    parts = []
    for name in sorted(chosen):
        member: GraphQLField = target.fields[name]
        alias = f"{name}Alias: " if draw(ALIASED) else ""
        if depth >= 4:
            inner = "{ __typename }" if isinstance(named(member.type), GraphQLObjectType) else ""
        else:
            inner = draw(selections(member.type, depth + 1))
        parts.append(f"{alias}{name} {inner}")
    return "{ " + " ".join(parts) + " }"


@dataclass(frozen=True)
class Operation:
    """One GraphQL request of the fuzzer."""

    caller: str  # a player, "anonymous" or "garbage"
    root: str
    field: str
    document: str
    variables: dict[str, Any]
    websocket: bool


ARGUMENT_MODES = st.sampled_from(["variable"] * 14 + ["literal", "literal", "omitted", "mistyped"])
MISDECLARED = st.sampled_from(["String", "Int!", "[ID]", "Boolean", "Seat"])
DIRECTIVES = st.sampled_from(["", "", "", "", "", " @include(if: true)", " @skip(if: false)"])
CALLERS = st.sampled_from([*PLAYERS, *PLAYERS, "anonymous", "garbage"])
FIELDS = [(kind, name) for kind, root in sorted(ROOTS.items()) for name in sorted(root.fields)]


@st.composite
def operations(draw: st.DrawFn, values: Values) -> Operation:
    """A well-formed operation on one root field of the schema."""
    root_kind, field_name = draw(st.sampled_from(FIELDS))
    member = ROOTS[root_kind].fields[field_name]
    keyword = draw(rarely(st.sampled_from(sorted(ROOTS)), st.just(root_kind), 30))
    definitions: list[str] = []
    arguments: list[str] = []
    variables: dict[str, Any] = {}
    for name, argument in member.args.items():
        how = draw(ARGUMENT_MODES)
        if how == "omitted":
            continue
        value = draw(values.of(argument.type, name))
        if how == "literal":
            arguments.append(f"{name}: {literal(value)}")
            continue
        declared = draw(MISDECLARED) if how == "mistyped" else type_text(argument.type)
        definitions.append(f"${name}: {declared}")
        arguments.append(f"{name}: ${name}")
        if draw(rarely(st.just(False), st.just(True), 20)):  # now and then left unset
            variables[name] = value
    if draw(rarely(st.just(True), st.just(False), 20)):
        variables["unexpected"] = draw(ANY_JSON)
    head = keyword + (" Fuzz(" + ", ".join(definitions) + ")" if definitions else "")
    args = "(" + ", ".join(arguments) + ")" if arguments else ""
    selection = draw(selections(member.type))
    nonsense = draw(NONSENSE)  # unknown fields, a fragment, very deep chains
    if nonsense and selection:
        selection = selection[:-1] + nonsense + " }"
    document = f"{head} {{ {field_name}{args}{draw(DIRECTIVES)} {selection} }}"
    websocket = root_kind == "subscription" and draw(st.booleans())
    return Operation(draw(CALLERS), root_kind, field_name, document, variables, websocket)


# ---------------------------------------------------------------------------- checks


def check_text(text: str, what: object) -> None:
    for bad in FORBIDDEN_TEXT:
        assert bad not in text, f"{bad!r} in the answer to {what}: {text[:1000]}"


def check_graphql_answer(answer: Any, what: object) -> None:
    """Every error has a message; codes are the contract's."""
    for item in answer if isinstance(answer, list) else [answer]:
        assert isinstance(item, dict), (what, answer)
        for error in item.get("errors") or []:
            assert isinstance(error.get("message"), str) and error["message"], (what, error)
            code = (error.get("extensions") or {}).get("code")
            assert code is None or code in CODES, (what, error)


def token_of(arena: Arena, operation: Operation) -> str | None:
    if operation.field == "signOut":  # keep the players' own tokens alive
        return arena.spare_tokens.pop() if arena.spare_tokens else "spent"
    if operation.caller == "anonymous":
        return None
    if operation.caller == "garbage":
        return "garbage-token"
    return arena.tokens[operation.caller]


async def send_http(arena: Arena, operation: Operation) -> None:
    token = token_of(arena, operation)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    body = {"query": operation.document, "variables": operation.variables}
    response = await arena.http.post(arena.server.http_url, json=body, headers=headers)
    arena.sent += 1
    check_text(response.text, operation)
    assert response.status_code in (200, 400), (response.status_code, operation, response.text)
    if response.status_code == 200:
        answer = response.json()
        check_graphql_answer(answer, operation)
        arena.pools.learn(answer.get("data"))


async def send_ws(arena: Arena, operation: Operation) -> None:
    """Subscribe on the caller's long-lived socket, ending the caller's previous
    subscription; a reader task keeps whatever comes back for the final check."""
    socket = await socket_of(arena, operation.caller)
    previous = arena.live.get(operation.caller)
    if previous is not None:
        await socket.send(json.dumps({"id": previous, "type": "complete"}))
    operation_id = f"op{arena.sent}"
    payload = {"query": operation.document, "variables": operation.variables}
    await socket.send(json.dumps({"id": operation_id, "type": "subscribe", "payload": payload}))
    arena.live[operation.caller] = operation_id
    arena.sent += 1


async def socket_of(arena: Arena, caller: str) -> ClientConnection:
    """The caller's socket, opened on first use (anonymous for made-up tokens, which the
    server refuses at connection_init: test_tokens.py covers that)."""
    socket = arena.sockets.get(caller)
    if socket is None:
        socket = await arena.stack.enter_async_context(
            ws_connection(arena.server, arena.tokens.get(caller))
        )
        ack = json.loads(await asyncio.wait_for(socket.recv(), 10))
        assert ack.get("type") == "connection_ack", ack
        arena.sockets[caller] = socket

        async def read() -> None:
            async for message in socket:
                arena.received.append(str(message))
                if '"ping"' in str(message):
                    await socket.send(json.dumps({"type": "pong"}))

        arena.loop.create_task(read())
    return socket


# ---------------------------------------------------------------------------- informed moves

GAME_QUERY = (
    "query($t: ID!) { game(tableId: $t) { phase turn viewerSeat handWithheld "
    "hand { suit rank } legalPlays { suit rank } seats { seat playerId } } }"
)


async def informed_move(arena: Arena, table_index: int, choice: int) -> None:
    """A legal move by whoever is on turn at one of the games, so that games advance."""
    tables = arena.pools.tables[:3]
    table = tables[table_index % len(tables)]
    by_id = {player_id: name for name, player_id in arena.ids.items()}
    answer = await Gql(arena.server, arena.http, arena.tokens["north"]).post(GAME_QUERY, t=table)
    view = (answer.get("data") or {}).get("game")
    if view is None:
        answer = await Gql(arena.server, arena.http, arena.tokens["east"]).post(GAME_QUERY, t=table)
        view = (answer.get("data") or {}).get("game")
    if view is None or view["turn"] is None:
        return
    occupant = next(s["playerId"] for s in view["seats"] if s["seat"] == view["turn"])
    if occupant not in by_id:
        return  # a bot's turn: it moves by itself
    mover = Gql(arena.server, arena.http, arena.tokens[by_id[occupant]])
    own = ((await mover.post(GAME_QUERY, t=table)).get("data") or {}).get("game")
    if own is None:
        return
    if own["phase"] == "BIDDING":
        if own["handWithheld"]:
            move = "mutation($t: ID!) { revealHand(tableId: $t) { version } }"
            if choice % 2:
                move = (
                    "mutation($t: ID!) { placeBid(tableId: $t, bid: {kind: BLIND_NIL}) "
                    "{ version } }"
                )
            answer = await mover.post(move, t=table)
        else:
            bid = {"kind": "NIL"} if choice % 9 == 0 else {"kind": "TRICKS", "tricks": choice % 6}
            answer = await mover.post(
                "mutation($t: ID!, $b: BidInput!) { placeBid(tableId: $t, bid: $b) { version } }",
                t=table,
                b=bid,
            )
    elif own["phase"] == "EXCHANGE":
        hand = own["hand"] or []
        answer = await mover.post(
            "mutation($t: ID!, $c: [CardInput!]!) { passCards(tableId: $t, cards: $c) "
            "{ version } }",
            t=table,
            c=[hand[choice % len(hand)], hand[(choice + 1) % len(hand)]],
        )
    elif own["phase"] == "PLAYING" and own["legalPlays"]:
        card = own["legalPlays"][choice % len(own["legalPlays"])]
        answer = await mover.post(
            "mutation($t: ID!, $c: CardInput!) { playCard(tableId: $t, card: $c) { version } }",
            t=table,
            c=card,
        )
    else:
        return
    check_graphql_answer(answer, "informed move")
    arena.informed_moves += 1


# ---------------------------------------------------------------------------- the tests


@dataclass(frozen=True)
class Step:
    """One example: a fuzzed operation, and maybe a legal move to keep the games going."""

    operation: Operation
    informed: tuple[int, int] | None


def steps(pools: Pools) -> st.SearchStrategy[Step]:
    """A fuzzed operation, and one time in three a legal move."""
    move = st.tuples(st.integers(0, 2), st.integers(0, 99))
    return st.builds(Step, operations(Values(pools)), st.one_of(st.none(), st.none(), move))


def test_random_operations_never_crash_the_server(arena: Arena) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(step=steps(arena.pools))
    def one(step: Step) -> None:
        operation = step.operation
        if operation.websocket:
            arena.run(send_ws(arena, operation))
        else:
            arena.run(send_http(arena, operation))
        if step.informed is not None:
            arena.run(informed_move(arena, *step.informed))

    one()
    arena.run(asyncio.sleep(1.0))  # let the WebSocket answers arrive
    assert arena.sent >= EXAMPLES
    assert arena.informed_moves > EXAMPLES // 10
    assert len(arena.received) >= 10  # answers over WebSocket were checked too
    for message in arena.received:
        check_text(message, "a WebSocket answer")
        parsed = json.loads(message)
        if parsed.get("type") in ("next", "error"):
            payload = parsed.get("payload")
            check_graphql_answer(
                payload if isinstance(payload, dict) else {"errors": payload}, "a WebSocket answer"
            )
    for caller, socket in arena.sockets.items():
        assert socket.close_code is None, f"{caller}'s socket was closed: {socket.close_reason}"
    log = arena.server.logs()
    check_text(log, "the server log")
    assert "unexpected error" not in log


def test_every_move_log_replays_to_the_stored_game(arena: Arena) -> None:
    arena.server.stop()
    with sqlite3.connect(f"file:{arena.server.database}?mode=ro", uri=True) as db:
        tables = db.execute("SELECT id, version, status, game_state FROM tables").fetchall()
        games = 0
        for table_id, version, status, state in tables:
            log = [
                (seq, changes, json.loads(move))
                for seq, changes, move in db.execute(
                    "SELECT seq, changes, move FROM moves WHERE table_id = ? ORDER BY seq",
                    (table_id,),
                )
            ]
            expected_seq = 1
            for seq, changes, _entry in log:  # one version per change, none lost
                assert seq == expected_seq, (table_id, log)
                expected_seq = seq + changes
            assert expected_seq - 1 == version, (table_id, version, log)
            starts = [entry for _, _, entry in log if entry["type"] == "start"]
            if not starts:
                assert state is None, table_id
                continue
            start = starts[0]
            game, _ = Game.start(start["players"], seed=int(start["seed"]))
            game.seed_public = bool(start["public"])
            for _seq, _changes, entry in log:
                move = entry_move(entry)
                if move is not None:
                    game.apply(move)
            assert game_to_data(game) == json.loads(state), f"table {table_id} ({status})"
            games += 1
    assert games >= 3
