"""The fast path: the one seam through which the server runs faster than graphql-core,
strawberry, starlette and uvicorn would on their own (docs/architecture.md, "The fast
path").

Nothing outside this package imports its modules; everything goes through the
functions below. What they do answers exactly what the libraries answer (each piece has
a test comparing both). All of it is off with `SPADES_FASTPATH=off`, and turns itself
off when an installed library is outside the versions its patches were written for
(versions.py), so a library upgrade can always fall back to the libraries' own path.

What it does, and where:
- a POSTed query or mutation skips strawberry's view and graphql-core's executor: a
  compiled plan calls its resolver and builds the answer (http.py, direct.py,
  arguments.py, plans.py); a move's answer is built only as far as it is read
  (lazy_view.py);
- a `gameUpdates` subscription follows its table's feed, which writes each change's
  frame once for all who see the same view (live.py, sharing.py, subscriptions.py), and
  an idle one parks with no task (parking.py);
- graphql-core's executor is patched (patches.py) and enum outputs looked up
  (enum_outputs.py);
- the transport: one ASGI layer for a POST and the WebSocket route past starlette's
  middlewares (app/api/app.py), uvicorn's protocols lighter per connection
  (app/api/transport/uvicorn_http.py, uvicorn_websocket.py), shared frames written
  straight to the socket (app/api/transport/writer.py).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

from graphql import GraphQLSchema
from strawberry.types import Info

from app.api.documents import OperationConfig
from app.api.fastpath import versions
from app.api.fastpath.enum_outputs import fast_enum_outputs
from app.api.fastpath.http import HotPath, View
from app.api.fastpath.lazy_view import Build, LazyGameView
from app.api.fastpath.parking import ParkingLegacyWSHandler, ParkingTransportWSHandler
from app.api.fastpath.patches import patch_graphql_core
from app.api.fastpath.sharing import encode_message as _encode_message
from app.api.fastpath.subscriptions import (
    Follow,
    Following,
    Project,
    current_operation,
    followed_updates,
    plain_updates,
)
from app.api.transport.uvicorn_http import CorkedHttpProtocol
from app.api.transport.uvicorn_websocket import LeanWebSocketProtocol
from app.api.transport.websocket import CheckedTransportWSHandler, LegacyWSHandler
from app.rules.seats import Seat
from app.services.tables.snapshot import TableSnapshot
from app.settings import Settings, load_settings

__all__ = [
    "Follow",
    "Following",
    "Project",
    "configure",
    "enabled",
    "game_updates",
    "http_shortcut",
    "install",
    "move_answer",
    "resuming",
    "shared_message_encoder",
    "uvicorn_protocols",
    "websocket_handlers",
]

log = logging.getLogger(__name__)


class _Switch:
    """Whether the fast path is on in this process (None: not decided yet)."""

    on: bool | None = None


_SWITCH = _Switch()


def configure(settings: Settings) -> bool:
    """Turn the fast path on or off for this process, as `settings` say and as the
    installed libraries allow; returns whether it is on."""
    on = settings.fastpath
    if on:
        problems = versions.unsupported()
        if problems:
            log.warning("fast path off: %s (pyproject.toml's bounds)", "; ".join(problems))
            on = False
    _SWITCH.on = on
    return on


def enabled() -> bool:
    """Whether the fast path is on (as SPADES_FASTPATH says, unless `configure` said
    otherwise first)."""
    on = _SWITCH.on
    return configure(load_settings()) if on is None else on


def install(schema: GraphQLSchema) -> None:
    """What the fast path changes in graphql-core and in `schema` (when on)."""
    if enabled():
        patch_graphql_core()
        fast_enum_outputs(schema)


def http_shortcut(view: View, config: OperationConfig) -> HotPath | None:
    """The fast path of POSTed queries and mutations of `view`; None when off."""
    return HotPath(view, config) if enabled() else None


def websocket_handlers() -> tuple[type[CheckedTransportWSHandler], type[LegacyWSHandler]]:
    """The handlers of graphql-transport-ws and graphql-ws: able to park when on."""
    if enabled():
        return ParkingTransportWSHandler, ParkingLegacyWSHandler
    return CheckedTransportWSHandler, LegacyWSHandler


def shared_message_encoder() -> Callable[[object], str | None] | None:
    """What gives the JSON of a transport message whose result is shared and already
    encoded (None from it: encode the message as usual); None when off."""
    return _encode_message if enabled() else None


def move_answer(table: TableSnapshot, viewer: Seat | None, build: Build) -> Any:
    """A move's answer, `build(table, viewer)`: built lazily when the fast path is on."""
    if enabled():
        return LazyGameView(table, viewer, build)
    return build(table, viewer)


def game_updates(info: Info[Any, Any], follow: Follow, project: Project) -> AsyncIterator[Any]:
    """The payloads of a `gameUpdates` subscription: `follow` opens the service's stream
    (with a sink for the fast path, or None), `project` turns a change into the
    subscriber's payload."""
    live = current_operation()  # only set by the fast path's WebSocket handlers
    if live is None:
        return plain_updates(follow, project)
    return followed_updates(cast(Any, info)._raw_info, live, follow, project)


def resuming() -> bool:
    """Whether the operation being run is a parked one run again (not a new operation)."""
    live = current_operation()
    return live is not None and live.parked is not None


def uvicorn_protocols() -> dict[str, Any]:
    """The `http` and `ws` protocol classes to run uvicorn with."""
    if enabled():
        return {"http": CorkedHttpProtocol, "ws": LeanWebSocketProtocol}
    return {"http": "httptools", "ws": "websockets-sansio"}
