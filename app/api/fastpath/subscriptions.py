"""`gameUpdates` as a resolver streams it, on the libraries' path or the fast one.

The resolver says what to follow (the service call) and how a change becomes its
payload; this module drives it. On the libraries' path the stream is iterated and each
change projected for the subscriber. On the fast path (an operation over a WebSocket
whose handler can take frames: app/api/fastpath/parking.py) the stream is given a sink,
so its table's feed writes most changes itself (app/api/fastpath/live.py), a change many
subscribers see gets one payload shared by those who see the same view
(app/api/fastpath/sharing.py), and a stream with nothing to do parks: the operation is
run again when a change is handed back, and this resumes it instead of following anew.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

from graphql import GraphQLResolveInfo

from app.api.fastpath.live import LIVE_OPERATION, LiveOperation, live_sink
from app.api.fastpath.sharing import shared_payload
from app.api.metrics import FANOUT
from app.services.live.table_feeds import Sink
from app.services.social.model import Viewer
from app.services.tables.snapshot import GameMessage


class Slot(Protocol):
    """A subscription slot of the caller's, held until released."""

    def release(self) -> None:
        """Give the slot back."""


@dataclass(frozen=True, slots=True)
class Following:
    """A subscription to follow: its subscriber, its stream of changes, and the slot it
    holds."""

    viewer: Viewer
    updates: AsyncIterator[GameMessage]
    slot: Slot


Follow = Callable[[Sink | None], Awaitable[Following]]


class Project(Protocol):
    """A change as one subscriber's payload (its viewer passed by name: it is bound so)."""

    def __call__(self, message: GameMessage, viewer: Viewer) -> Any: ...


def _observe(message: GameMessage) -> None:
    if message.committed_at:  # a live change, seen by every subscriber
        FANOUT.observe(max(0.0, time.time() - message.committed_at))


async def plain_updates(follow: Follow, project: Project) -> AsyncIterator[Any]:
    """The libraries' path: every change of the stream, projected for its subscriber."""
    following = await follow(None)
    viewer = following.viewer
    try:
        async for message in following.updates:
            _observe(message)
            yield project(message, viewer)
    finally:
        following.slot.release()


async def followed_updates(
    info: GraphQLResolveInfo[Any], live: LiveOperation, follow: Follow, project: Project
) -> AsyncIterator[Any]:
    """The fast path: the stream follows its table's feed, or resumes after parking."""
    parked = live.unpark()
    if parked is None:
        sink = live_sink(info, live)
        following = await follow(sink)
        viewer, held, stream = following.viewer, following.slot, following.updates
        if sink is not None:
            sink.bind(viewer.id, partial(project, viewer=viewer))
    else:  # the same operation run again to take on its parked stream
        viewer, held, stream = parked.viewer, parked.held, parked.stream.resume()
    try:
        async for message in stream:
            if message.committed_at:  # a live change, seen by every subscriber
                _observe(message)
                seat = message.table.seat_of(viewer.id)
                update = shared_payload(message, seat, project, message, viewer)
            else:  # a SNAPSHOT or a replayed update: this subscriber's alone
                update = project(message, viewer)
            yield update
            # An idle subscription keeps nothing of its last update alive.
            del update, message
    finally:
        # Parked (app/services/live/followed.py): the slot stays held until the end.
        if not live.keep(held, viewer):
            held.release()


def current_operation() -> LiveOperation | None:
    """The WebSocket operation being run, if its handler can take frames."""
    return LIVE_OPERATION.get()
