"""Direct operations: a POSTed query or mutation of one root field, answered by calling
that field's resolver and building its value along a compiled plan (app/api/fastpath/plans.py),
without graphql-core's executor around them.

A move over POST (`playCard(...) { ...GameFields }`) is a one-field mutation whose
value is a plain GameView. graphql-core would build an executor, collect the root
fields, run them serially through its completion machinery and complete each field of
the view by its general path, ~15 Python calls a field. Here the variables are coerced
and the root field's arguments read by graphql-core's own functions, the field's
resolver (strawberry's, so its argument conversion, our error translation and all the
resolver does are unchanged) is called with the resolve info the schema's executor
class would build, and the value is built by the plan.

Anything but the plain success is left to graphql-core, so that its answers stay its
own: variables or arguments that do not coerce are reported by executing the operation
the normal way (nothing has run yet). Once the resolver has run, a resolver that raised
or a value the plan does not build is *replayed*: the operation is executed the normal
way with a middleware that answers the root field with the resolver's outcome (its
value, or its exception raised again) instead of calling the resolver a second time.

Not direct (None from `compile_direct`): several root fields, an introspection field, a
directive anywhere in the document (`@skip`/`@include` would make the plan depend on the
variables), fragment variables, a root field without a resolver, or a selection the plan
compiler refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import TYPE_CHECKING, Any

from graphql import (
    DocumentNode,
    ExecutionResult,
    FieldNode,
    FragmentDefinitionNode,
    GraphQLField,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    OperationDefinitionNode,
    OperationType,
)
from graphql.execution.collect_fields import FieldDetailsList, FragmentDetails, collect_fields
from graphql.execution.values import VariableValues, get_argument_values, get_variable_values
from graphql.pyutils import Path
from graphql.type import GraphQLResolveInfoHelpers

from app.api.fastpath.arguments import ArgumentPlan, compile_arguments
from app.api.fastpath.patches import gather_async_work
from app.api.fastpath.plans import Node, Unplannable, compile_node, complete

if TYPE_CHECKING:
    from strawberry import Schema
    from strawberry.types.field import StrawberryField

# graphql-core's default for `execute` (the normal path's limit).
MAX_COERCION_ERRORS = 50
_NO_VARIABLES = VariableValues(sources={}, coerced={})


def _untracked(_values: Any) -> None:
    """No executor waits for a direct resolver's spawned work: ours spawn none."""


_HELPERS = GraphQLResolveInfoHelpers(gather=gather_async_work, track=_untracked)


@dataclass(frozen=True, slots=True)
class _Collecting:
    """The scope the selection is compiled in: no variables (no directive may use one)."""

    schema: GraphQLSchema
    fragments: dict[str, FragmentDetails]
    operation: OperationDefinitionNode
    variable_values: VariableValues = _NO_VARIABLES


@dataclass(slots=True)
class _ResolveScope:
    """What the executor class's `build_resolve_info` reads of an executor."""

    schema: GraphQLSchema
    fragment_definitions: dict[str, FragmentDefinitionNode]
    operation: OperationDefinitionNode
    variable_values: VariableValues
    context_value: Any
    is_awaitable: Callable[[Any], bool]
    root_value: None = None
    abort_signal: None = None
    async_helpers: GraphQLResolveInfoHelpers = _HELPERS
    operation_extensions: None = None


class Replay:
    """The middleware of a replayed execution: the root field answers the outcome its
    resolver already gave (the other fields resolve as usual)."""

    __slots__ = ("_error", "_value")

    def __init__(self, value: Any = None, error: Exception | None = None) -> None:
        self._value = value
        self._error = error

    def resolve(
        self, next_: Callable[..., Any], root: Any, info: GraphQLResolveInfo[Any], **args: Any
    ) -> Any:
        """graphql-core's middleware hook."""
        if info.path.prev is not None:
            return next_(root, info, **args)
        if self._error is not None:
            raise self._error
        return self._value


@dataclass(frozen=True, slots=True)
class Call:
    """A root field's resolver called as strawberry calls it (for a field with no
    extension and no exception handler): the source (None at the root) as `self`, as
    `root`/`parent` if asked for, strawberry's Info as the info parameter."""

    definition: StrawberryField
    info_class: Callable[..., Any]
    takes_self: bool
    source_names: tuple[str, ...]
    info_name: str | None

    def __call__(self, info: GraphQLResolveInfo[Any], kwargs: dict[str, Any]) -> Any:
        """The resolver's outcome for these converted arguments."""
        if self.info_name is not None:
            kwargs[self.info_name] = self.info_class(_raw_info=info, _field=self.definition)
        for name in self.source_names:
            kwargs[name] = None
        resolver: Callable[..., Any] | None = self.definition.base_resolver
        assert resolver is not None
        return resolver(None, **kwargs) if self.takes_self else resolver(**kwargs)


@dataclass(frozen=True, slots=True)
class DirectOperation:
    """A valid one-field query or mutation, compiled (see the module's docstring)."""

    schema: GraphQLSchema
    operation: OperationDefinitionNode
    fragment_definitions: dict[str, FragmentDefinitionNode]
    root_type: GraphQLObjectType
    field: GraphQLField
    key: str
    nodes: list[FieldNode]
    plan: Node
    build_info: Callable[..., GraphQLResolveInfo[Any]]
    arguments: ArgumentPlan | None = None  # with `call`: arguments compiled too
    call: Call | None = None
    path: Path = dataclass_field(init=False)  # the root field's response path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(None, self.key, self.root_type.name))

    async def run(
        self, context: Any, variables: dict[str, Any] | None, is_awaitable: Callable[[Any], bool]
    ) -> ExecutionResult | Replay | None:
        """The result, or a Replay for graphql-core to finish it, or None: nothing ran,
        execute it the normal way."""
        if self.arguments is not None and self.call is not None:
            kwargs = self.arguments.convert(variables)
            if kwargs is not None:
                return await self._called(self.call, context, variables, kwargs, is_awaitable)
        schema, operation, field = self.schema, self.operation, self.field
        coerced = get_variable_values(
            schema, operation.variable_definitions or (), variables or {}, MAX_COERCION_ERRORS
        )
        if isinstance(coerced, list):
            return None
        first = self.nodes[0]
        try:
            args = (
                get_argument_values(field, first, coerced) if field.args or first.arguments else {}
            )
        except Exception:  # graphql-core's to report, as a field error
            return None
        resolve = field.resolve
        assert resolve is not None
        return await self._answer(context, coerced, is_awaitable, _resolve, resolve, args)

    async def _called(
        self,
        call: Call,
        context: Any,
        variables: dict[str, Any] | None,
        kwargs: dict[str, Any],
        is_awaitable: Callable[[Any], bool],
    ) -> ExecutionResult | Replay:
        """The result by the compiled arguments: the resolver called without graphql-core's
        coercion or strawberry's conversion. (Its raw info's `variable_values` are the
        request's variables as sent: no resolver reads them.)"""
        given = VariableValues(sources={}, coerced=variables or {})
        return await self._answer(context, given, is_awaitable, call, kwargs)

    async def _answer(
        self,
        context: Any,
        variables: VariableValues,
        is_awaitable: Callable[[Any], bool],
        resolve: Callable[..., Any],
        *args: Any,
    ) -> ExecutionResult | Replay:
        """`resolve(info, *args)` for the root field, its value built by the plan; a
        Replay if it raised or the plan cannot build its value."""
        scope = _ResolveScope(
            self.schema, self.fragment_definitions, self.operation, variables, context, is_awaitable
        )
        info = self.build_info(scope, self.field, self.nodes, self.root_type, self.path)
        try:
            value = resolve(info, *args)
            if is_awaitable(value):
                value = await value
        except Exception as error:
            return Replay(error=error)
        try:
            data = {self.key: complete(self.plan, value)}
        except Exception:  # a value graphql-core would report an error for
            return Replay(value)
        return ExecutionResult(data, None)


def _resolve(
    info: GraphQLResolveInfo[Any], resolve: Callable[..., Any], args: dict[str, Any]
) -> Any:
    """The field's own resolver at the root (its source is None), as graphql-core calls it."""
    return resolve(None, info, **args)


def compile_direct(
    schema: GraphQLSchema,
    text: str,
    document: DocumentNode,
    operation: OperationDefinitionNode,
    build_info: Callable[..., GraphQLResolveInfo[Any]],
    strawberry_schema: Schema | None = None,
) -> DirectOperation | None:
    """The direct form of a validated single-operation document, or None. With the
    strawberry schema, its root field's arguments are compiled too where they can be."""
    if "@" in text:  # any directive (or an @ in a string: then simply not direct)
        return None
    root_type = _root_type(schema, operation)
    if root_type is None:
        return None
    fragments: dict[str, FragmentDetails] = {}
    definitions: dict[str, FragmentDefinitionNode] = {}
    for definition in document.definitions:
        if isinstance(definition, FragmentDefinitionNode):
            if definition.variable_definitions:
                return None
            definitions[definition.name.value] = definition
            fragments[definition.name.value] = FragmentDetails(definition, None)
    scope = _Collecting(schema, fragments, operation)
    collected = collect_fields(schema, fragments, _NO_VARIABLES, root_type, operation)
    if collected.new_defer_usages or collected.forbidden_directive_instances:
        return None
    if len(collected.grouped_field_set) != 1:
        return None
    ((key, details),) = collected.grouped_field_set.items()
    field = _resolved_field(root_type, details)
    if field is None:
        return None
    try:
        plan = compile_node(scope, field.type, details)
    except Unplannable:
        return None
    nodes = [detail.node for detail in details]
    arguments, call = None, None
    if strawberry_schema is not None and len(nodes) == 1:
        call = _call(strawberry_schema, field)
        if call is not None:
            converter = strawberry_schema.schema_converter
            arguments = compile_arguments(
                schema,
                operation,
                field,
                nodes[0],
                call.definition,
                converter.scalar_registry,
                strawberry_schema.config,
            )
    return DirectOperation(
        schema,
        operation,
        definitions,
        root_type,
        field,
        key,
        nodes,
        plan,
        build_info,
        arguments,
        call if arguments is not None else None,
    )


def _call(strawberry_schema: Schema, field: GraphQLField) -> Call | None:
    """How strawberry calls the field's resolver, where nothing else stands between."""
    definition: StrawberryField | None = field.extensions.get("strawberry-definition")
    resolver = definition.base_resolver if definition is not None else None
    if definition is None or resolver is None or definition.extensions:
        return None
    if strawberry_schema.schema_converter.exception_handlers:
        return None
    sources = tuple(
        parameter.name
        for parameter in (resolver.parent_parameter, resolver.root_parameter)
        if parameter is not None
    )
    info = resolver.info_parameter
    return Call(
        definition=definition,
        info_class=strawberry_schema.config.info_class,
        takes_self=resolver.self_parameter is not None,
        source_names=sources,
        info_name=info.name if info is not None else None,
    )


def _root_type(
    schema: GraphQLSchema, operation: OperationDefinitionNode
) -> GraphQLObjectType | None:
    if operation.operation is OperationType.QUERY:
        return schema.query_type
    if operation.operation is OperationType.MUTATION:
        return schema.mutation_type
    return None


def _resolved_field(root_type: GraphQLObjectType, details: FieldDetailsList) -> GraphQLField | None:
    """The root field, if it is a field with a resolver of its own (not introspection)."""
    name = details[0].node.name.value
    if name.startswith("__") or any(detail.fragment_variable_values for detail in details):
        return None
    field: GraphQLField | None = root_type.fields.get(name)
    if field is None or field.resolve is None or getattr(field.resolve, "_is_default", False):
        return None
    return field
