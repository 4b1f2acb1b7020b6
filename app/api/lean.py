"""The lean live phase of `gameUpdates` over WebSocket (app/services/feeds.py): the
table's feed hands each live change to the subscription's `LiveSink`, which writes the
`next` (graphql-transport-ws) or `data` (graphql-ws) frame to the connection's
SocketWriter without strawberry's and graphql-core's per-result machinery.

The frame is built once per distinct message: the memo on the broker message is keyed by
the viewer's seat (None: every spectator), the operation (its parsed node and variables),
the protocol and the operation id, so subscribers share a frame only where it is the very
same text; the result under it is the payload's shared one (app/api/sharing.py), which
never mixes two viewers' views. That result is built by the operation's compiled plan
(app/api/plans.py: attribute reads, no graphql-core execution) where it has one, else by
graphql-core. A change the sink cannot write this way (a result with errors, which must
be masked and counted; a field that resolves asynchronously) is handed back and goes
through the normal path.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from graphql import DocumentNode, GraphQLResolveInfo
from graphql.execution.executor import Executor
from graphql.pyutils import is_awaitable

from app.rules.seats import Seat
from app.services.model import GameMessage

from .metrics import TallyCounter
from .plans import Plan, compile_plan
from .sharing import SharedData, encoded_data, message_prefix, planned_shared, shared_payload
from .transport.writer import Frame, SocketWriter

FRAMES = TallyCounter(
    "spades_subscription_frames",
    "Live-update frames: built, or shared with another subscriber",
    "outcome",
)
_BUILT, _SHARED = FRAMES.labels("built"), FRAMES.labels("shared")

_FRAMES = "live frames"  # the key of the frame memo in GameMessage.views


@dataclass(slots=True, eq=False)
class LiveOperation:
    """A WebSocket operation that can receive live updates written for it."""

    writer: SocketWriter
    id: str
    kind: str  # the result message's type: "next" (graphql-transport-ws) or "data"
    closed: bool = False  # completed or stopped: nothing more is written for it


# Set by the protocol handlers for the task that runs one operation.
LIVE_OPERATION: ContextVar[LiveOperation | None] = ContextVar("live_operation", default=None)


class LiveSink:
    """Writes the live changes of one `gameUpdates` subscription (a feeds.Sink)."""

    __slots__ = (
        "_build",
        "_executor",
        "_key",
        "_live",
        "_operation",
        "_plan",
        "_prefix",
        "_viewer_id",
    )

    def __init__(
        self,
        executor: Executor[Any],
        live: LiveOperation,
        viewer_id: str,
        build: Callable[[GameMessage], Any],
    ) -> None:
        variables = executor.variable_values.coerced
        self._executor = executor
        self._operation = executor.operation
        self._live = live
        self._viewer_id = viewer_id
        self._build = build
        self._plan: Plan | None = compile_plan(executor)
        self._prefix = message_prefix(live.id, live.kind)  # the same for all its frames
        shape = repr(sorted(variables.items())) if variables else ""
        self._key = (id(executor.operation), shape, live.kind, live.id)

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
            _BUILT.inc()
        else:
            _SHARED.inc()
        live.writer.write(entry[1])
        return True

    def _frame(self, message: GameMessage, seat: Seat | None) -> Frame | None:
        payload = shared_payload(message, seat, lambda: self._build(message))
        plan = self._plan
        if plan is not None:
            shape = self._key[1]
            planned = planned_shared(payload, self._operation, shape, lambda: plan.run(payload))
            if planned is not None:
                return self._encoded(planned)
        result = self._executor.build_per_event_executor(payload).execute_operation()
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


def live_sink(
    info: GraphQLResolveInfo[Any], viewer_id: str, build: Callable[[GameMessage], Any]
) -> LiveSink | None:
    """The sink of the subscription being resolved, if it runs over a WebSocket that can
    take frames written for it; else None (it streams through the normal path)."""
    live = LIVE_OPERATION.get()
    if live is None or live.closed:
        return None
    document = DocumentNode(definitions=(info.operation, *info.fragments.values()))
    executor = Executor.build(
        info.schema,
        document,
        None,
        info.context,
        dict(cast(dict[str, Any], info.variable_values)),  # the coerced values
        info.operation.name.value if info.operation.name else None,
    )
    if isinstance(executor, list):  # cannot happen for a validated operation
        return None
    return LiveSink(executor, live, viewer_id, build)
