"""The live phase of game subscriptions, below the server: one table feed fans each change
out to its followers (app/services/live/table_feeds.py), whose sinks write frames built
once per distinct view (app/api/fastpath/live.py) to bounded per-socket writers
(app/api/transport/writer.py).
"""

from __future__ import annotations

import asyncio
import json
import re
from functools import partial
from typing import Any

import pytest
from graphql import parse
from graphql.execution.executor import Executor
from websockets.frames import Frame as WsFrame
from websockets.frames import Opcode

from app.api.fastpath.live import LiveOperation, LiveSink
from app.api.fastpath.patches import patch_graphql_core
from app.api.graphql.resolvers.game import game_update
from app.api.graphql.schema import build_schema
from app.api.transport.writer import Frame, SocketWriter, frame_bytes
from app.broker.base import RESYNC
from app.broker.memory import MemoryBroker
from app.rules.errors import ErrorCode, RuleError
from app.rules.game import Game
from app.rules.seats import SEATS
from app.services.accounts.auth import Player
from app.services.live.table_feeds import Feeds, Follower, TableFeed
from app.services.lobby.service import relation
from app.services.social.model import Notice, NoticeKind, Viewer, player_channel
from app.services.tables.access import can_watch
from app.services.tables.events import GameEvent
from app.services.tables.ledger import game_channel
from app.services.tables.snapshot import GameMessage, TableSnapshot, TableStatus
from tests.support.scenarios import GAME_UPDATES
from tests.support.tables import PLAYERS, table_snapshot

patch_graphql_core()
SCHEMA = build_schema()
DOCUMENT = parse(GAME_UPDATES)
CARD = re.compile(r'"suit":"(\w+)","rank":"(\w+)"')


class Recorder:
    """A SocketWriter's stand-in that keeps what was written."""

    def __init__(self) -> None:
        self.frames: list[Frame | str] = []

    def write(self, frame: Frame | str) -> None:
        self.frames.append(frame)


def check(viewer: Viewer, table: TableSnapshot) -> None:
    rel = relation(viewer, table)
    if not rel.seated and not can_watch(table, rel):
        raise RuleError(ErrorCode.FORBIDDEN, "spectating is off at this table")


def viewer(player_id: str) -> Viewer:
    return Viewer(Player(player_id, player_id))


def sink(who: Viewer, writer: Recorder, operation_id: str = "1", kind: str = "next") -> LiveSink:
    executor = Executor.build(SCHEMA._schema, DOCUMENT, None, None, {"t": "t1"})
    assert isinstance(executor, Executor)
    live = LiveOperation(writer, operation_id, kind)  # type: ignore[arg-type]
    variables = executor.variable_values.coerced
    made = LiveSink(live, executor.operation, variables, lambda: executor)
    made.bind(who.id, partial(game_update, viewer=who))
    return made


def playing(version: int, game: Game | None = None, **fields: Any) -> TableSnapshot:
    game = game if game is not None else Game.start(list(PLAYERS), seed=5)[0]
    return table_snapshot(status=TableStatus.PLAYING, version=version, game=game, **fields)


def change(table: TableSnapshot, event: GameEvent = GameEvent.BID_PLACED) -> GameMessage:
    return GameMessage(event, SEATS[0], table, committed_at=1.0)


async def settle() -> None:
    for _ in range(3):
        await asyncio.sleep(0)


class Table:
    """A feed on a memory broker, with followers each following in a task."""

    def __init__(self) -> None:
        self.broker: MemoryBroker[Any] = MemoryBroker()
        self.feeds = Feeds(self.broker, check, lambda _table: None)
        self.handed_back: dict[Follower, Any] = {}
        self.tasks: list[asyncio.Task[None]] = []

    async def follow(self, feed: TableFeed, follower: Follower) -> None:
        async def run() -> None:
            async with self.feeds.player(follower, feed):
                self.handed_back[follower] = await feed.follow(follower)

        self.tasks.append(asyncio.create_task(run()))
        await settle()

    async def publish(self, message: Any, channel: str = game_channel("t1")) -> None:
        await self.broker.publish(channel, message)
        await settle()

    async def close(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


@pytest.fixture
async def table() -> Any:
    made = Table()
    yield made
    await made.close()


def cards(text: str) -> set[tuple[str, str]]:
    return set(CARD.findall(text))


def text_of(frame: Frame | str) -> str:
    return frame.text if isinstance(frame, Frame) else frame


async def test_spectators_get_one_frame_object_and_no_hidden_card(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        writers = {name: Recorder() for name in (*PLAYERS, "s1", "s2", "s3")}
        for name, writer in writers.items():
            who = viewer(name)
            await table.follow(feed, Follower(who, sink(who, writer), last=1))
        game = Game.start(list(PLAYERS), seed=5)[0]
        await table.publish(change(playing(2, game)))
        assert not table.handed_back
        spectators = [writers[s].frames for s in ("s1", "s2", "s3")]
        assert all(len(frames) == 1 for frames in spectators)
        assert spectators[0][0] is spectators[1][0] is spectators[2][0]
        spectator = json.loads(text_of(spectators[0][0]))
        assert spectator["id"] == "1" and spectator["type"] == "next"
        view = spectator["payload"]["data"]["gameUpdates"]["view"]
        assert view["viewerSeat"] is None and view["hand"] is None
        dealt = {(c.suit.name, c.rank.name) for hand in game.hand.hands for c in hand}
        assert len(dealt) == 52
        assert not cards(text_of(spectators[0][0])) & dealt  # nothing played yet
        hands = []
        for seat, name in zip(SEATS, PLAYERS, strict=True):
            (frame,) = writers[name].frames
            own = {(c.suit.name, c.rank.name) for c in game.hand.hands[seat]}
            assert cards(text_of(frame)) == own  # its own hand, nobody else's
            hands.append(frame)
        assert len({id(f) for f in hands} | {id(spectators[0][0])}) == 5


async def test_a_different_operation_id_gets_its_own_frame(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        first, second = Recorder(), Recorder()
        for writer, operation_id in ((first, "1"), (second, "7")):
            who = viewer(f"s{operation_id}")
            await table.follow(feed, Follower(who, sink(who, writer, operation_id), last=1))
        await table.publish(change(playing(2)))
        (a,), (b,) = first.frames, second.frames
        assert a is not b
        assert json.loads(text_of(b))["id"] == "7"
        assert json.loads(text_of(a))["payload"] == json.loads(text_of(b))["payload"]


async def test_the_legacy_protocol_gets_data_messages_of_the_same_payload(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        current, legacy = Recorder(), Recorder()
        for writer, kind in ((current, "next"), (legacy, "data")):
            who = viewer(f"s{kind}")
            await table.follow(feed, Follower(who, sink(who, writer, "1", kind), last=1))
        await table.publish(change(playing(2)))
        (a,), (b,) = current.frames, legacy.frames
        assert json.loads(text_of(b))["type"] == "data"
        assert json.loads(text_of(a))["payload"] == json.loads(text_of(b))["payload"]


async def test_a_gap_hands_the_follower_back_without_writing(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        writer = Recorder()
        follower = Follower(viewer("s1"), sink(viewer("s1"), writer), last=1)
        await table.follow(feed, follower)
        skipped = change(playing(3))
        await table.publish(skipped)
        assert table.handed_back[follower] is skipped and not writer.frames
        assert follower.last == 1


async def test_resync_hands_every_follower_back(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        followers = [
            Follower(viewer(f"s{n}"), sink(viewer(f"s{n}"), Recorder()), 1) for n in (1, 2)
        ]
        for follower in followers:
            await table.follow(feed, follower)
        feed.receive(RESYNC)
        await settle()
        assert [table.handed_back.get(f) for f in followers] == [RESYNC, RESYNC]


async def test_a_resync_that_came_while_the_follower_was_away_is_handed_back_on_return(
    table: Table,
) -> None:
    # After a Redis reconnect, RedisBroker resyncs the player channel and the table
    # channel in one go: the player watch takes the follower away (to recheck its social
    # graph) before the feed fans its RESYNC out. Coming back, it must still catch up.
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        follower = Follower(viewer("s1"), sink(viewer("s1"), Recorder()), 1, feed.resyncs)
        async with table.feeds.player(follower, feed):
            away = asyncio.create_task(feed.follow(follower))
            await settle()
            watch = table.feeds.players["s1"].subscription
            assert watch is not None and feed.subscription is not None
            watch.resync()
            feed.subscription.resync()
            assert await away is None  # the social recheck, first
            follower.social_changed = False
            back = asyncio.create_task(feed.follow(follower))
            await settle()
            assert back.done() and back.result() is RESYNC
            again = asyncio.create_task(feed.follow(follower))  # owed once, not forever
            await settle()
            assert not again.done()
            again.cancel()


async def test_a_spectator_who_lost_the_right_to_watch_is_handed_back(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        spectator, player = Recorder(), Recorder()
        watching = Follower(viewer("s1"), sink(viewer("s1"), spectator), last=1)
        seated = Follower(viewer(PLAYERS[1]), sink(viewer(PLAYERS[1]), player), last=1)
        await table.follow(feed, watching)
        await table.follow(feed, seated)
        await table.publish(change(playing(2)))
        hidden = change(playing(3, spectating=False))
        await table.publish(hidden)
        assert len(spectator.frames) == 1 and table.handed_back[watching] is hidden
        assert len(player.frames) == 2 and seated not in table.handed_back


async def test_seating_changes_and_the_end_go_through_the_stream(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        writer = Recorder()
        follower = Follower(viewer("s1"), sink(viewer("s1"), writer), last=1)
        await table.follow(feed, follower)
        closed = change(playing(2), GameEvent.TABLE_CLOSED)
        await table.publish(closed)
        assert table.handed_back[follower] is closed and not writer.frames


async def test_a_social_change_hands_the_players_followers_back(table: Table) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        follower = Follower(viewer("s1"), sink(viewer("s1"), Recorder()), last=1)
        other = Follower(viewer("s2"), sink(viewer("s2"), Recorder()), last=1)
        await table.follow(feed, follower)
        await table.follow(feed, other)
        notice = Notice(NoticeKind.SOCIAL_CHANGED, "s1", {})
        await table.publish(notice, player_channel("s1"))
        assert table.handed_back == {follower: None}


async def test_a_follower_back_from_its_stream_catches_up_from_the_recent_changes(
    table: Table,
) -> None:
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        await table.publish(change(playing(2)))
        await table.publish(change(playing(3)))
        writer = Recorder()
        follower = Follower(viewer("s1"), sink(viewer("s1"), writer), last=1)
        await table.follow(feed, follower)
        versions = [
            json.loads(text_of(f))["payload"]["data"]["gameUpdates"]["view"]["version"]
            for f in writer.frames
        ]
        assert versions == [2, 3] and follower.last == 3 and not table.handed_back


async def test_a_feed_keeps_the_projections_of_its_latest_change_only(table: Table) -> None:
    # Projections, results and frames kept with every recent change would outlive young
    # collections by the thousand at human pace; a follower catching up projects again.
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        writer = Recorder()
        await table.follow(feed, Follower(viewer("s1"), sink(viewer("s1"), writer), last=1))
        first, second = change(playing(2)), change(playing(3))
        await table.publish(first)
        assert first.views
        await table.publish(second)
        assert not first.views and second.views and len(writer.frames) == 2
        late = Recorder()
        await table.follow(feed, Follower(viewer("s2"), sink(viewer("s2"), late), last=1))
        assert [text_of(f) for f in late.frames] == [text_of(f) for f in writer.frames]


async def test_a_pass_that_writes_is_observed_once_and_one_that_hands_back_is_not(
    table: Table,
) -> None:
    observed: list[float] = []
    table.feeds.on_fanout = observed.append
    async with table.feeds.table("t1", game_channel("t1")) as feed:
        for n in (1, 2):
            who = viewer(f"s{n}")
            await table.follow(feed, Follower(who, sink(who, Recorder()), last=1))
        await table.publish(change(playing(2)))  # written to both: one observation
        assert len(observed) == 1 and observed[0] >= 0
        await table.publish(change(playing(4)))  # a gap: both handed back, their streams
        assert len(observed) == 1  # observe it when they yield it


def test_frames_are_the_bytes_a_websocket_library_would_send() -> None:
    for size in (5, 125, 126, 200, 65535, 65536, 70000):
        payload = b"x" * size
        assert frame_bytes(payload) == WsFrame(Opcode.TEXT, payload).serialize(
            mask=False, extensions=[]
        )
    assert Frame("é").wire == frame_bytes("é".encode())


class Stuck:
    """A client that stopped reading: sends never complete."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed: list[tuple[int, str]] = []

    async def send_text(self, text: str) -> None:
        self.sent.append(text)
        await asyncio.Event().wait()

    async def close(self, code: int, reason: str) -> None:
        self.closed.append((code, reason))


async def test_an_outbox_that_overflows_closes_with_4410() -> None:
    client = Stuck()
    writer = SocketWriter(client.send_text, client.close, timeout_s=3600, limit=3)
    writer.write("frame 0")
    await settle()  # being sent, never done
    for n in range(1, 5):
        writer.write(f"frame {n}")
    await settle()
    assert client.closed == [(4410, "too slow: reconnect and resubscribe with since")]
    assert client.sent == ["frame 0"] and writer.closing
    writer.write("later")
    await settle()
    assert client.sent == ["frame 0"]


async def test_a_send_that_times_out_closes_with_4410_and_frees_waiting_senders() -> None:
    client = Stuck()
    writer = SocketWriter(client.send_text, client.close, timeout_s=0.01)
    waiting = asyncio.create_task(writer.send("second"))
    await writer.send("first")  # the stuck send: returns once the writer gave up
    await asyncio.wait_for(waiting, 5)
    assert [code for code, _ in client.closed] == [4410]


async def test_writes_and_sends_keep_their_order() -> None:
    sent: list[str] = []
    gate = asyncio.Event()

    async def send_text(text: str) -> None:
        await gate.wait()
        sent.append(text)

    async def close(code: int, reason: str) -> None:
        raise AssertionError("not closed")

    writer = SocketWriter(send_text, close, timeout_s=3600)
    first = asyncio.create_task(writer.send("ack"))
    await settle()
    writer.write("live 1")
    second = asyncio.create_task(writer.send("complete"))
    await settle()
    writer.write("live 2")
    gate.set()
    await asyncio.gather(first, second)
    await settle()
    assert sent == ["ack", "live 1", "complete", "live 2"]
