"""The HTTP fast path: a plain JSON POST of one query or mutation whose document is
already known to be valid runs straight on graphql-core, without strawberry's HTTP view
and extension runner around it. A move (`playCard`, `placeBid`... over POST /graphql)
is such a request, thousands of times a game.

It answers exactly what the normal path answers (tests/server/test_hotpath.py compares
the bytes): the same context (`get_context`: the same authentication), the same
resolvers (with their rate limits and error codes), the same error processing in the
same order (`process_errors`: logging and request-error codes; then the metrics; then
the masking of unexpected errors), the same formatting and response (`create_response`:
media type, status, headers). Anything else takes the normal path, decided before
anything runs: GET, another content type, a batch, persisted queries or document ids,
trusted-documents mode, `extensions`, a subscription, several operations in one
document, or a document that does not parse or validate (its errors are the normal
path's to report)."""

from __future__ import annotations

from dataclasses import dataclass
from inspect import isawaitable
from typing import Any, Protocol

from graphql import (
    DocumentNode,
    ExecutionResult,
    GraphQLError,
    OperationDefinitionNode,
    execute,
    specified_rules,
)
from starlette.requests import Request
from starlette.responses import Response
from strawberry.execution.is_awaitable import optimized_is_awaitable
from strawberry.http import process_result
from strawberry.http.parse_content_type import parse_content_type
from strawberry.types import ExecutionResult as StrawberryResult

from app.api.documents import OperationConfig
from app.api.fastpath.direct import DirectOperation, Replay, compile_direct
from app.api.metrics import REQUESTS, count_errors


class View(Protocol):
    """What the fast path uses of the GraphQL view it answers for (strawberry's ASGI view
    with the server's transport: app/api/graphql/view.py), so that its answers are the
    view's own: the same context, error processing, response."""

    schema: Any  # strawberry's Schema (its graphql-core schema, process_errors, executor)
    documents: Any  # persisted and trusted documents (app/api/transport/persisted.py)

    def decode_json(self, data: str | bytes) -> object: ...

    async def get_sub_response(self, request: Request) -> Response: ...

    async def get_context(self, request: Request, response: Response | None = None) -> Any: ...

    def create_response(self, response_data: Any, sub_response: Response) -> Response: ...


# Operations that may take the fast path (a subscription never does).
FAST_OPERATIONS = frozenset({"query", "mutation"})
# Texts remembered (with their verdict); the cache is emptied when full.
PLANS_CACHED = 256
_NOT_FAST = object()
# Members of a JSON body that, when set, send the request the normal way.
_OTHERS = ("extensions", "documentId")


@dataclass(frozen=True, slots=True)
class Plan:
    """A valid document of one query or mutation."""

    document: DocumentNode
    operation: str  # "query" or "mutation"
    name: str | None  # the operation's name, if it has one
    direct: DirectOperation | None  # its direct form (app/api/fastpath/direct.py), if it has one


class HotPath:
    """The fast path of one GraphQL view (see the module's docstring)."""

    def __init__(self, view: View, config: OperationConfig) -> None:
        self.view = view
        self.config = config
        self.schema = view.schema
        self._plans: dict[str, Plan | object] = {}
        # The rule set strawberry validates every operation with (the same tuple object
        # as the normal path's, so the document cache's verdict is shared).
        self._rules = config.rules_after(tuple(specified_rules))

    async def answer(self, request: Request) -> Response | None:
        """The response to `request`, or None (nothing ran) for the normal path."""
        if request.method != "POST" or self.view.documents.trusted is not None:
            return None
        content_type, _ = parse_content_type(request.headers.get("content-type", ""))
        if content_type != "application/json":
            return None
        # Reading is not guarded: a body over the limit (BodyLimit) or a client gone must
        # end the request as it would on the normal path, which could not read it again.
        raw = await request.body()
        try:
            body = self.view.decode_json(raw)
        except ValueError:  # the normal path reads the same (cached) body and refuses it
            return None
        if not isinstance(body, dict):
            return None
        if any(body.get(member) is not None for member in _OTHERS):
            return None
        query, variables, name = body.get("query"), body.get("variables"), body.get("operationName")
        if not isinstance(query, str) or not isinstance(variables, dict | None):
            return None
        if not isinstance(name, str | None):
            return None
        plan = self.plan(query)
        if plan is None or (name is not None and name != plan.name):
            return None
        return await self._run(request, plan, variables, name)

    def plan(self, query: str) -> Plan | None:
        """The plan of `query` if it may take the fast path (decided once per text)."""
        plan = self._plans.get(query)
        if plan is None:
            plan = self._make_plan(query) or _NOT_FAST
            if len(self._plans) >= PLANS_CACHED:
                self._plans.clear()
            self._plans[query] = plan
        return plan if isinstance(plan, Plan) else None

    def _make_plan(self, query: str) -> Plan | None:
        documents = self.config.documents
        try:
            document = documents.document(query)
        except Exception:
            return None
        if len(document.definitions) != 1:
            return None
        (definition,) = document.definitions
        if not isinstance(definition, OperationDefinitionNode):
            return None
        operation = definition.operation.value
        if operation not in FAST_OPERATIONS:
            return None
        try:
            if documents.errors(self.schema._schema, query, document, self._rules):
                return None
        except Exception:  # a rule that fails: the normal path's to report
            return None
        name = definition.name.value if definition.name else None
        schema = self.schema
        direct = compile_direct(
            schema._schema,
            query,
            document,
            definition,
            schema.execution_context_class.build_resolve_info,
            schema,
        )
        return Plan(document=document, operation=operation, name=name, direct=direct)

    async def _run(
        self, request: Request, plan: Plan, variables: dict[str, Any] | None, name: str | None
    ) -> Response:
        view = self.view
        sub_response = await view.get_sub_response(request)
        context = await view.get_context(request, response=sub_response)
        REQUESTS.labels(plan.operation).inc()
        result = await self._execute(plan, context, variables, name)
        response_data = process_result(result)
        return view.create_response(response_data, sub_response)

    async def _execute(
        self, plan: Plan, context: Any, variables: dict[str, Any] | None, name: str | None
    ) -> StrawberryResult:
        """graphql-core's execution (or the direct one), then what strawberry and our
        extension do with its errors, in their order."""
        try:
            outcome = await self._direct(plan, context, variables, name)
        except Exception as exc:  # as strawberry: reported, neither counted nor masked
            error = _coerce_error(exc)
            self.schema.process_errors([error])
            return StrawberryResult(data=None, errors=[error], extensions={})
        result: ExecutionResult = outcome
        if result.errors:
            self.schema.process_errors(result.errors)
        count_errors(result)
        errors = self.config.mask(result.errors) if result.errors else result.errors
        return StrawberryResult(data=result.data, errors=errors, extensions={})

    async def _direct(
        self, plan: Plan, context: Any, variables: dict[str, Any] | None, name: str | None
    ) -> ExecutionResult:
        replay: Replay | None = None
        if plan.direct is not None:
            answered = await plan.direct.run(context, variables, optimized_is_awaitable)
            if isinstance(answered, ExecutionResult):
                return answered
            replay = answered
        outcome = execute(
            self.schema._schema,
            plan.document,
            root_value=None,
            context_value=context,
            variable_values=variables,
            operation_name=name,
            middleware=(replay,) if replay is not None else None,
            is_awaitable=optimized_is_awaitable,  # type: ignore[arg-type]
            executor_class=self.schema.execution_context_class,
            operation_extensions=None,
        )
        if isawaitable(outcome):
            outcome = await outcome
        return outcome


def _coerce_error(exc: Exception) -> GraphQLError:
    """An exception out of execution as strawberry reports it."""
    return exc if isinstance(exc, GraphQLError) else GraphQLError(str(exc), original_error=exc)
