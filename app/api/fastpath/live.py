"""The lean live phase of `gameUpdates` over WebSocket (app/services/live/table_feeds.py): the
table's feed hands each live change to the subscription's `LiveSink`, which writes the
`next` (graphql-transport-ws) or `data` (graphql-ws) frame to the connection's
SocketWriter without strawberry's and graphql-core's per-result machinery.

The frame is built once per distinct message: the memo on the broker message is keyed by
the viewer's seat (None: every spectator), the operation (its parsed node and variables),
the protocol and the operation id, so subscribers share a frame only where it is the very
same text; the result under it is the payload's shared one (app/api/fastpath/sharing.py), which
never mixes two viewers' views. That result is built by the operation's compiled plan
(app/api/fastpath/plans.py: attribute reads, no graphql-core execution) where it has one, else by
graphql-core. A change the sink cannot write this way (a result with errors, which must
be masked and counted; a field that resolves asynchronously) is handed back and goes
through the normal path.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from graphql import DocumentNode, GraphQLResolveInfo, GraphQLSchema, OperationDefinitionNode
from graphql.execution.executor import Executor
from graphql.pyutils import is_awaitable

from app.api.fastpath.plans import Plan, compile_plan
from app.api.fastpath.sharing import (
    SharedData,
    encoded_data,
    message_prefix,
    planned_shared,
    shared_payload,
)
from app.api.metrics import PARKED, TallyCounter
from app.api.transport.writer import Frame, SocketWriter
from app.rules.seats import Seat
from app.services.tables.snapshot import GameMessage

FRAMES = TallyCounter(
    "spades_subscription_frames",
    "Live-update frames: built, or shared with another subscriber",
    "outcome",
)
_BUILT, _SHARED = FRAMES.labels("built"), FRAMES.labels("shared")

_FRAMES = "live frames"  # the key of the frame memo in GameMessage.views
# ...and of the completed lists and objects the message's seat views share (plans.py).
_SUBTREES = "live subtrees"


@dataclass(slots=True, eq=False)
class Parked:
    """What a parked `gameUpdates` operation holds between its runs: the service's
    followed stream, and the resolver's own (its subscription slot) with its viewer."""

    stream: Any  # app/services/live/followed.py: FollowedStream
    run: int  # the run of the operation that parked it (LiveOperation.runs)
    held: Any = None  # app/api/graphql/context.py: SubscriptionSlot
    viewer: Any = None


@dataclass(slots=True, eq=False)
class LiveOperation:
    """A WebSocket operation that can receive live updates written for it.

    Where its protocol handler can run it again (`restart`), a `gameUpdates` operation
    with nothing to do parks (app/services/live/followed.py): its task ends without
    completing it, `parked` keeps what it holds, and a change handed back restarts it."""

    writer: SocketWriter
    id: str
    kind: str  # the result message's type: "next" (graphql-transport-ws) or "data"
    closed: bool = False  # completed or stopped: nothing more is written for it
    restart: Callable[[], None] | None = None
    parked: Parked | None = None
    runs: int = 0  # how many times its handler ran it (a run ends it only if the last)

    def park(self, stream: Any) -> bool:
        """Hold the followed stream with no task; False where it cannot be restarted."""
        if self.closed or self.restart is None or self.parked is not None:
            return False
        self.parked = Parked(stream, self.runs)
        PARKED.inc()
        return True

    def keep(self, held: Any, viewer: Any) -> bool:
        """The resolver's part, kept while parked; False: not parked, release it."""
        if self.parked is None or self.closed:
            return False
        self.parked.held, self.parked.viewer = held, viewer
        return True

    def parked_by(self, run: int) -> bool:
        """Whether run `run` parked it (and so it waits for a wake, not for that run):
        a run that ended before taking on what an earlier run parked must end it."""
        return self.parked is not None and self.parked.run == run

    def unpark(self) -> Parked | None:
        """What a parked operation held, for the run that resumes it (None: not parked)."""
        parked, self.parked = self.parked, None
        if parked is not None:
            PARKED.dec()
        return parked

    def wake(self) -> None:
        """A change was handed back to the parked stream: run the operation again."""
        if not self.closed and self.parked is not None and self.restart is not None:
            self.restart()

    def release(self) -> None:
        """The operation ended: nothing more is written, and what it held while parked
        is let go."""
        self.closed = True
        self.restart = None
        parked = self.unpark()
        if parked is not None:
            parked.stream.close()
            if parked.held is not None:
                parked.held.release()


# Set by the protocol handlers for the task that runs one operation.
LIVE_OPERATION: ContextVar[LiveOperation | None] = ContextVar("live_operation", default=None)


class LiveSink:
    """Writes the live changes of one `gameUpdates` subscription (a feeds.Sink)."""

    __slots__ = (
        "_build",
        "_executor",
        "_executor_of",
        "_key",
        "_live",
        "_operation",
        "_plan",
        "_prefix",
        "_viewer_id",
    )

    def __init__(
        self,
        live: LiveOperation,
        operation: OperationDefinitionNode,
        variables: dict[str, Any] | None,
        executor_of: Callable[[], Executor[Any] | None],
    ) -> None:
        self._operation = operation
        self._live = live
        # Bound once the subscriber is known (`bind`), before its stream starts.
        self._viewer_id = ""
        self._build: Callable[[GameMessage], Any] | None = None
        # The executor is built only if the plan cannot answer (most subscriptions never):
        # one per idle subscription would be ~1 KiB of its memory.
        self._executor: Executor[Any] | None = None
        self._executor_of = executor_of
        self._prefix = message_prefix(live.id, live.kind)  # the same for all its frames
        shape = repr(sorted(variables.items())) if variables else ""
        self._plan: Plan | None = _plan_of(operation, shape, executor_of)
        self._key = (id(operation), shape, live.kind, live.id)

    def bind(self, viewer_id: str, build: Callable[[GameMessage], Any]) -> None:
        """The subscriber (whose seat decides what it sees) and its payload's builder."""
        self._viewer_id = viewer_id
        self._build = build

    def _executor_when_needed(self) -> Executor[Any] | None:
        executor = self._executor
        if executor is None:
            executor = self._executor = self._executor_of()
        return executor

    def park(self, stream: Any) -> bool:
        """Hold the followed stream while it waits (LiveOperation.park)."""
        return self._live.park(stream)

    def wake(self) -> None:
        """Run the parked operation again (LiveOperation.wake)."""
        self._live.wake()

    def __call__(self, message: GameMessage) -> bool:
        live = self._live
        if live.closed:
            return True  # the operation ended; its stream ends too
        seat = message.table.seat_of(self._viewer_id)
        frames = message.views.get(_FRAMES)
        if frames is None:
            frames = message.views[_FRAMES] = {}
        key = (seat, self._key)
        entry = frames.get(key)
        # The id of the operation is only trusted while that very node is the one memoized.
        if entry is None or entry[0] is not self._operation:
            frame = self._frame(message, seat)
            if frame is None:
                return False
            entry = frames[key] = (self._operation, frame)
            _BUILT.count += 1
        else:
            _SHARED.count += 1
        live.writer.write(entry[1])
        return True

    def _frame(self, message: GameMessage, seat: Seat | None) -> Frame | None:
        build = self._build
        if build is None:  # not bound: the subscriber is not known yet
            return None
        payload = shared_payload(message, seat, build, message)
        plan = self._plan
        if plan is not None:
            shape = self._key[1]
            subtrees = message.views.get(_SUBTREES)
            if subtrees is None:
                subtrees = message.views[_SUBTREES] = {}
            planned = planned_shared(payload, self._operation, shape, plan, subtrees)
            if planned is not None:
                return self._encoded(planned)
        executor = self._executor_when_needed()
        if executor is None:
            return None
        result = executor.build_per_event_executor(payload).execute_operation()
        if is_awaitable(result):
            close = getattr(result, "close", None)
            if close is not None:
                close()
            return None
        data = getattr(result, "data", None)
        if getattr(result, "errors", None) or not isinstance(data, SharedData):
            return None
        return self._encoded(data)

    def _encoded(self, data: SharedData) -> Frame:
        return Frame(self._prefix + encoded_data(data) + "}}")


def live_sink(info: GraphQLResolveInfo[Any], live: LiveOperation | None) -> LiveSink | None:
    """The sink of the subscription being resolved, if it runs over a WebSocket that can
    take frames written for it (`live`, LIVE_OPERATION); else None (it streams through
    the normal path)."""
    if live is None or live.closed:
        return None
    variables = dict(cast(dict[str, Any], info.variable_values))  # the coerced values
    document = DocumentNode(definitions=(info.operation, *info.fragments.values()))
    name = info.operation.name.value if info.operation.name else None
    # The pieces, not the resolve info (which holds this execution's own state).
    executor_of = partial(_executor, info.schema, document, info.context, variables, name)
    return LiveSink(live, info.operation, variables, executor_of)


def _executor(
    schema: GraphQLSchema,
    document: DocumentNode,
    context: Any,
    variables: dict[str, Any],
    name: str | None,
) -> Executor[Any] | None:
    executor = Executor.build(schema, document, None, context, variables, name)
    return None if isinstance(executor, list) else executor  # a list: cannot happen here


# Compiled plans by operation (its parsed node, shared by every subscriber that sent the
# same text: app/api/operations.py, DocumentCache) and variables: one per document, not
# one per subscription.
_PLANS: OrderedDict[tuple[int, str], tuple[OperationDefinitionNode, Plan | None]] = OrderedDict()
PLANS_CACHED = 256


def _plan_of(
    operation: OperationDefinitionNode,
    shape: str,
    executor_of: Callable[[], Executor[Any] | None],
) -> Plan | None:
    """The compiled plan of `operation` under variables `shape` (None: it has none)."""
    key = (id(operation), shape)
    entry = _PLANS.get(key)
    if entry is not None and entry[0] is operation:  # an id is only trusted with its node
        _PLANS.move_to_end(key)
        return entry[1]
    executor = executor_of()
    plan = compile_plan(executor) if executor is not None else None
    _PLANS[key] = (operation, plan)
    if len(_PLANS) > PLANS_CACHED:
        _PLANS.popitem(last=False)
    return plan
