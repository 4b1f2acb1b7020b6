"""Identical subscription results executed and serialized once per change.

Every subscriber of a table receives each change, projected for its own viewer: its
seat's view, or the spectators' view. Subscribers who see the same view (every spectator
of the table; several subscriptions of one seat) get the *same* event payload object
(`shared_payload`, one per message and viewer seat), and on such a payload:

- the per-event execution of an operation is memoized on the payload itself, keyed by
  the operation (the parsed document's node, shared by the parser cache) and its
  variables (`execute_shared`, hooked into graphql-core by app/api/fastpath/patches.py);
- its `data` is a `SharedData` dict that carries its own JSON once encoded, so the
  transport's message is built around it without serializing it again (`encode_message`).

No viewer can receive another's view: a payload is only ever shared between subscribers
whose projection is the same (same message, same viewer seat, None for spectators, who
all see the same spectator view), and the memo lives and dies with that payload. The
selection on a payload resolves no field from the request context (GameUpdate and
GameView are plain data), so its result depends only on the payload, the document and
the variables, which are the memo's key.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

from graphql import ExecutionResult
from graphql.pyutils import is_awaitable

from app.api.metrics import TallyCounter
from app.compact_json import dumps
from app.rules.seats import Seat
from app.services.tables.snapshot import GameMessage

if TYPE_CHECKING:
    from app.api.fastpath.plans import Plan, Subtrees

EXECUTIONS = TallyCounter(
    "spades_subscription_executions",
    "Executions of subscription events: run, or shared with another subscriber",
    "outcome",
)
ENCODINGS = TallyCounter(
    "spades_subscription_encodings",
    "JSON encodings of subscription results: done, or shared with another subscriber",
    "outcome",
)
_RAN, _SHARED = EXECUTIONS.labels("ran"), EXECUTIONS.labels("shared")
_ENCODED, _REUSED = ENCODINGS.labels("encoded"), ENCODINGS.labels("shared")

_PAYLOADS = "shared payloads"  # the key of the payloads in GameMessage.views


class SharedPayload(Protocol):
    """An event payload that may be shared: it holds its executions' memo."""

    shared_executions: dict[Any, Any] | None


class SharedData(dict[str, Any]):
    """A result's `data`, shared by its subscribers, with its JSON once encoded (made by
    `shared_data`: no Python `__init__` on the fan-out's path)."""

    __slots__ = ("encoded",)
    encoded: str | None


def shared_data(data: dict[str, Any]) -> SharedData:
    """`data` as SharedData, not yet encoded."""
    shared = SharedData(data)
    shared.encoded = None
    return shared


def shared_payload(
    message: GameMessage, seat: Seat | None, build: Callable[..., Any], *args: Any
) -> Any:
    """The payload of `message` for viewers of `seat` (None: spectators), built once, its
    executions memoized. Only for a message many subscribers get (a live change): a
    SNAPSHOT or a replay is one subscriber's, and a memo there would only hold memory."""
    payloads: dict[Seat | None, Any] = message.views.setdefault(_PAYLOADS, {})
    payload = payloads.get(seat)
    if payload is None:
        payload = payloads[seat] = build(*args)
        payload.shared_executions = {}
    return payload


def _recall(memo: dict[Any, Any] | None, key: Any, operation: object) -> Any:
    """The value memoized under `key` for this very operation node, counted as shared;
    None if there is none. (The id of the operation in a key is only trusted while that
    node is the one stored beside the value.)"""
    entry = memo.get(key) if memo is not None else None
    if entry is None or entry[0] is not operation:
        return None
    _SHARED.count += 1
    return entry[1]


def planned_shared(
    payload: SharedPayload,
    operation: object,
    shape: str,
    plan: Plan,
    subtrees: Subtrees | None = None,
) -> SharedData | None:
    """The data of a compiled plan's run on `payload` (app/api/fastpath/plans.py), memoized on the
    payload for the same operation (its parsed node) and variables (`shape`), as
    `execute_shared` memoizes executions: subscribers whose operation ids differ still
    share one run and one encoding. None: the plan gave way (execute it the normal way)."""
    memo = payload.shared_executions
    key = ("plan", id(operation), shape)
    # `_recall`, inline: once per subscriber of every change.
    entry = memo.get(key) if memo is not None else None
    if entry is not None and entry[0] is operation:
        _SHARED.count += 1
        return cast(SharedData, entry[1])
    data = plan.run(payload, subtrees)
    if data is None:
        return None
    _RAN.count += 1
    shared = shared_data(data)
    if memo is not None:
        memo[key] = (operation, shared)
    return shared


def _memo_key(executor: Any) -> tuple[int, str]:
    variables = executor.variable_values.coerced
    return id(executor.operation), repr(sorted(variables.items())) if variables else ""


def execute_shared(
    executor: Any, payload: SharedPayload, execute: Callable[[], Any]
) -> ExecutionResult | Awaitable[ExecutionResult]:
    """The result of `execute()` (the per-event executor of `payload`), memoized on the
    payload for the same operation and variables. A result with errors is not shared."""
    memo = payload.shared_executions
    if memo is None:
        alone: ExecutionResult | Awaitable[ExecutionResult] = execute()
        return alone
    key = _memo_key(executor)
    operation = executor.operation
    cached = _recall(memo, key, operation)
    if cached is not None:
        return cast(ExecutionResult, cached)
    _RAN.count += 1
    result = execute()

    def remember(done: ExecutionResult) -> ExecutionResult:
        if done.errors or done.data is None:
            return done
        shared = ExecutionResult(shared_data(done.data), None, done.extensions)
        memo[key] = (operation, shared)
        return shared

    if is_awaitable(result):

        async def settle() -> ExecutionResult:
            return remember(await result)

        return settle()
    return remember(result)


def encoded_data(data: SharedData) -> str:
    """The JSON of a shared result's data, encoded once for all its subscribers."""
    if data.encoded is None:
        _ENCODED.count += 1
        data.encoded = dumps(data)
    else:
        _REUSED.count += 1
    return data.encoded


def message_prefix(operation_id: object, kind: str) -> str:
    """The JSON of a transport message up to its data: `{"id":..,"type":..,"payload":
    {"data":` (closed by `}}` after the data)."""
    head = dumps({"id": operation_id, "type": kind})
    return head[:-1] + ',"payload":{"data":'


def encode_message(message: object) -> str | None:
    """The JSON of a transport message whose payload is exactly `{"data": SharedData}`,
    reusing the data's JSON; None for any other message (encoded as usual)."""
    if not isinstance(message, dict) or len(message) != 3 or "type" not in message:
        return None
    payload = message.get("payload")
    if not isinstance(payload, dict) or len(payload) != 1:
        return None
    data = payload.get("data")
    if not isinstance(data, SharedData):
        return None
    return message_prefix(message.get("id"), message["type"]) + encoded_data(data) + "}}"
