"""Compiled selection plans: a subscription's live result built straight from its payload.

graphql-core executes each field of each result through its general machinery (resolve
info, path, the field's strawberry resolver, completion by type, awaitable checks): ~15
Python calls per field, ~600 for a small game view and several thousand for the web
client's. A live `gameUpdates` result reads only plain data (GameUpdate and GameView
hold values; their fields have no resolver, argument or permission), so where that holds
for every field an operation selects, its selection is compiled once per subscription
into a plan, and each result is built by reading attributes and coercing leaves: a few
dozen calls.

The plan gives exactly graphql-core's `data`: fields are collected by graphql-core's own
`collect_fields`/`collect_subfields` (fragments, aliases, `@skip`/`@include` with the
operation's variables, the same order), leaves are coerced by the types' own
`coerce_output_value` (with the common scalars checked inline), and anything that
graphql-core would turn into an error (a null for a non-null field, a value of the
wrong kind, a resolver that raises) is not built here: `run` gives None, and the caller
executes the result the normal way, which reports the error as usual.

Not compiled (None from `compile_plan`): a field with arguments or a resolver of its
own, an abstract type, `@defer`/`@stream`, fragment variables, middleware.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Protocol

from graphql import (
    GraphQLBoolean,
    GraphQLID,
    GraphQLInt,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    OperationDefinitionNode,
    Undefined,
)
from graphql.execution.collect_fields import (
    FieldDetailsList,
    FragmentDetails,
    collect_fields,
    collect_subfields,
)
from graphql.execution.executor import Executor
from graphql.execution.values import VariableValues

from app.api.fastpath.enum_outputs import member_names

_MAX_INT, _MIN_INT = 2**31 - 1, -(2**31)
_STRAWBERRY_FIELD = "strawberry-definition"  # strawberry's back-reference on a field


class Scope(Protocol):
    """What a selection is collected in (an executor has these, as does
    app/api/fastpath/direct.py's operation)."""

    @property
    def schema(self) -> GraphQLSchema: ...
    @property
    def fragments(self) -> dict[str, FragmentDetails]: ...
    @property
    def variable_values(self) -> VariableValues: ...
    @property
    def operation(self) -> OperationDefinitionNode: ...


class Unplannable(Exception):
    """The selection reads something a plan does not build (it runs the normal way)."""


class Fallback(Exception):
    """This value needs graphql-core (it would give an error): build the result there."""


class Kind(IntEnum):
    """How a plan node completes its value (an IntEnum: compared in C in the hot loop).
    Leaves of the common scalars are checked inline."""

    STRING = 0  # String or ID given a str
    INT = 1
    BOOLEAN = 2
    LEAF = 3  # any other scalar or enum: the type's coerce_output_value
    LIST = 4
    OBJECT = 5
    TYPENAME = 6
    ENUM = 7  # a strawberry enum whose members' names are known (app/api/fastpath/patches.py)


@dataclass(slots=True, frozen=True)
class Node:
    """The completion of one value of a type (non_null: a None is an error)."""

    kind: Kind
    non_null: bool
    coerce: Callable[[Any], Any] | None = None  # LEAF, and the fallback of STRING/INT/BOOLEAN
    item: Node | None = None  # LIST
    fields: tuple[tuple[str, str, Node], ...] = ()  # OBJECT: (response key, attribute, node)
    typename: str = ""  # TYPENAME
    names: dict[int, Any] | None = None  # ENUM: each member's name by its id


class Plan:
    """The compiled selection of one subscription operation (its root field's value is
    the event payload itself, as strawberry resolves a subscription field per event)."""

    __slots__ = ("_key", "_root")

    def __init__(self, key: str, root: Node) -> None:
        self._key = key
        self._root = root

    def run(self, payload: Any, subtrees: Subtrees | None = None) -> dict[str, Any] | None:
        """The `data` of the result for `payload`, or None: execute it the normal way.
        With `subtrees`, the completed lists and objects of values it already holds are
        taken from it, and those completed here are added: payloads that share values
        (the seat views of one change share its public fields) complete them once."""
        try:
            return {self._key: _complete(self._root, payload, subtrees)}
        except Exception:  # anything unusual is graphql-core's to report
            return None


# Completed lists and objects by (id of the plan node, id of the value); each entry holds
# its node and value, so that an id is only trusted while its object is the one held. The
# completed data is shared by the results that take it: never mutated.
Subtrees = dict[tuple[int, int], tuple["Node", Any, Any]]


def compile_node(scope: Scope, type_: GraphQLOutputType, details: FieldDetailsList) -> Node:
    """The plan of one field's value of `type_` selected by `details` (Unplannable if it
    has none)."""
    return _Compiler(scope).node(type_, details)


def complete(node: Node, value: Any) -> Any:
    """The completed value of `node` for `value`, as graphql-core completes a value it
    accepts; raises (Fallback or another error) where graphql-core would report one."""
    return _complete(node, value)


def compile_plan(executor: Executor[Any]) -> Plan | None:
    """The plan of a validated subscription operation, or None if it has no plan."""
    try:
        return _compile(executor)
    except Unplannable:
        return None


def _compile(executor: Executor[Any]) -> Plan:
    schema = executor.schema
    root_type = schema.subscription_type
    if root_type is None or executor.middleware_manager is not None:
        raise Unplannable
    collected = collect_fields(
        schema, executor.fragments, executor.variable_values, root_type, executor.operation
    )
    if collected.new_defer_usages or collected.forbidden_directive_instances:
        raise Unplannable
    grouped = collected.grouped_field_set
    if len(grouped) != 1:
        raise Unplannable
    ((key, details),) = grouped.items()
    field = root_type.fields.get(details[0].node.name.value)
    definition = field.extensions.get(_STRAWBERRY_FIELD) if field is not None else None
    if field is None or definition is None or not definition.is_subscription:
        raise Unplannable
    return Plan(key, _Compiler(executor).node(field.type, details))


class _Compiler:
    def __init__(self, scope: Scope) -> None:
        self._executor = scope

    def node(self, type_: GraphQLOutputType, details: FieldDetailsList) -> Node:
        non_null = isinstance(type_, GraphQLNonNull)
        if isinstance(type_, GraphQLNonNull):
            type_ = type_.of_type
        if isinstance(type_, GraphQLList):
            return Node(Kind.LIST, non_null, item=self.node(type_.of_type, details))
        if isinstance(type_, GraphQLObjectType):
            return Node(Kind.OBJECT, non_null, fields=self._fields(type_, details))
        if isinstance(type_, GraphQLLeafType):
            names = member_names(type_)
            if names is not None:
                return Node(Kind.ENUM, non_null, coerce=type_.coerce_output_value, names=names)
            return Node(_leaf_kind(type_), non_null, coerce=type_.coerce_output_value)
        raise Unplannable  # an interface or a union

    def _fields(
        self, type_: GraphQLObjectType, details: FieldDetailsList
    ) -> tuple[tuple[str, str, Node], ...]:
        if type_.is_type_of is not None:
            raise Unplannable
        executor = self._executor
        collected = collect_subfields(
            executor.schema,
            executor.fragments,
            executor.variable_values,
            executor.operation,
            type_,
            details,
        )
        if collected.new_defer_usages or collected.forbidden_directive_instances:
            raise Unplannable
        fields = []
        for key, sub in collected.grouped_field_set.items():
            name = sub[0].node.name.value
            if any(d.fragment_variable_values or _directives(d.node) for d in sub):
                raise Unplannable
            if name == "__typename":
                fields.append((key, "", Node(Kind.TYPENAME, True, typename=type_.name)))
                continue
            field = type_.fields.get(name)
            if field is None or field.args:
                raise Unplannable
            fields.append((key, _attribute(field), self.node(field.type, sub)))
        return tuple(fields)


def _directives(node: Any) -> bool:
    """Has the field node a directive other than @skip/@include (already applied)?"""
    return any(d.name.value not in ("skip", "include") for d in node.directives or ())


def _attribute(field: Any) -> str:
    """The attribute a plain strawberry field reads (strawberry's basic resolver: no
    resolver, permission, extension or error handler of its own, the default getattr)."""
    definition = field.extensions.get(_STRAWBERRY_FIELD)
    if (
        definition is None
        or not getattr(field.resolve, "_is_default", False)
        or definition.default_resolver is not getattr
    ):
        raise Unplannable
    return str(definition.python_name)


def _leaf_kind(type_: GraphQLLeafType) -> Kind:
    if type_ is GraphQLString or type_ is GraphQLID:
        return Kind.STRING
    if type_ is GraphQLInt:
        return Kind.INT
    if type_ is GraphQLBoolean:
        return Kind.BOOLEAN
    return Kind.LEAF


_NESTED = frozenset({Kind.LIST, Kind.OBJECT})


def _complete_shared(node: Node, value: Any, subtrees: Subtrees) -> Any:
    """`_complete` of a list or object value, taken from `subtrees` if completed there."""
    key = (id(node), id(value))
    entry = subtrees.get(key)
    if entry is not None and entry[0] is node and entry[1] is value:
        return entry[2]
    completed = _complete(node, value, subtrees)
    subtrees[key] = (node, value, completed)
    return completed


def _complete(node: Node, value: Any, subtrees: Subtrees | None = None) -> Any:
    """The completed value (graphql-core's `complete_value` for a value it accepts);
    `subtrees`: see `Plan.run`."""
    if value is None:
        if node.non_null:
            raise Fallback
        return None
    kind = node.kind
    if kind == Kind.OBJECT:
        out: dict[str, Any] = {}
        for key, attribute, sub in node.fields:
            sub_kind = sub.kind
            if sub_kind == Kind.TYPENAME:
                out[key] = sub.typename
                continue
            field_value = getattr(value, attribute)
            if sub_kind == Kind.ENUM:
                name = sub.names.get(id(field_value))  # type: ignore[union-attr]
                out[key] = name if name is not None else _complete(sub, field_value)
                continue
            # The common leaves inline: their exact Python types pass unchanged.
            if field_value is not None and (
                (sub_kind == Kind.STRING and type(field_value) is str)
                or (sub_kind == Kind.BOOLEAN and type(field_value) is bool)
                or (
                    sub_kind == Kind.INT
                    and type(field_value) is int
                    and _MIN_INT <= field_value <= _MAX_INT
                )
            ):
                out[key] = field_value
            elif subtrees is not None and field_value is not None and sub_kind in _NESTED:
                out[key] = _complete_shared(sub, field_value, subtrees)
            else:
                out[key] = _complete(sub, field_value, subtrees)
        return out
    if kind == Kind.LIST:
        if type(value) is not list and type(value) is not tuple:
            raise Fallback
        item = node.item
        assert item is not None
        return [_complete(item, v, subtrees) for v in value]
    coerce = node.coerce
    assert coerce is not None
    coerced = coerce(value)
    if coerced is None or coerced is Undefined:
        raise Fallback
    return coerced
