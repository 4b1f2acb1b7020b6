"""Compiled arguments: a direct operation's root-field arguments converted from the
request's variables without graphql-core's coercion and strawberry's conversion.

A move's arguments (`tableId`, a card, an expected version) went through graphql-core's
variable coercion and argument values, then strawberry's argument conversion: ~140
Python calls for three small values, a tenth of all a move cost. Per document, this
compiles what those give:

- arguments written in the document (literals) and defaults are coerced and converted
  once, by graphql-core and strawberry themselves;
- an argument fed by a variable of a common scalar type (ID, String, Int, Boolean)
  given a value of exactly the JSON type it accepts is that value, as both libraries
  would leave it;
- any other variable value (an enum name, an input object such as a card) is converted
  by the two libraries the first time it is seen and remembered by its exact JSON value
  and the types of its members, so `1` and `true` never share an entry.

Anything else (a value of another type, a null where none may be, a missing value that
needs a default, a nested list or object) gives None: the operation takes the normal
path, whose coercion reports any error. Converted input objects are shared by the
requests that sent the same value: resolvers read their arguments, never change them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from graphql import (
    FieldNode,
    GraphQLArgument,
    GraphQLBoolean,
    GraphQLField,
    GraphQLID,
    GraphQLInputType,
    GraphQLInt,
    GraphQLNonNull,
    GraphQLSchema,
    GraphQLString,
    OperationDefinitionNode,
    Undefined,
    VariableNode,
    coerce_input_value,
    type_from_ast,
)
from graphql.execution.values import VariableValues, get_argument_values
from strawberry.types.arguments import StrawberryArgument, convert_argument, convert_arguments
from strawberry.types.base import StrawberryList, StrawberryOptional, has_object_definition
from strawberry.types.field import StrawberryField

_MAX_INT, _MIN_INT = 2**31 - 1, -(2**31)
_NO_VARIABLES = VariableValues(sources={}, coerced={})
_ABSENT = object()
MEMO_KEPT = 256  # converted values remembered per argument (emptied when full)


class _Refused(Exception):
    """A value for the normal path to coerce (and report, if it is wrong)."""


def _string(value: Any) -> Any:
    if type(value) is not str:
        raise _Refused
    return value


def _int(value: Any) -> Any:
    if type(value) is not int or not _MIN_INT <= value <= _MAX_INT:
        raise _Refused
    return value


def _boolean(value: Any) -> Any:
    if type(value) is not bool:
        raise _Refused
    return value


_SCALARS: dict[Any, Callable[[Any], Any]] = {
    GraphQLID: _string,
    GraphQLString: _string,
    GraphQLInt: _int,
    GraphQLBoolean: _boolean,
}


class _Remembered:
    """Converts any value the two libraries accept, each distinct value once."""

    __slots__ = ("_argument", "_context", "_memo", "_type")

    def __init__(
        self, type_: GraphQLInputType, argument: StrawberryArgument, context: _Context
    ) -> None:
        self._type = type_
        self._argument = argument
        self._context = context
        self._memo: dict[Any, Any] = {}

    def __call__(self, value: Any) -> Any:
        key = _key(value)
        try:
            return self._memo[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable member (a nested list or object)
            raise _Refused from None
        context = self._context
        try:
            coerced = coerce_input_value(value, self._type)
            if coerced is Undefined:
                raise _Refused
            converted = convert_argument(
                coerced,
                self._argument.type,
                context.scalar_registry,
                context.config,
                None,
                path=(context.graphql_name(self._argument),),
            )
        except Exception:  # refused, or a conversion error: the normal path reports it
            raise _Refused from None
        if len(self._memo) >= MEMO_KEPT:
            self._memo.clear()
        self._memo[key] = converted
        return converted


def _key(value: Any) -> Any:
    """The memo key of a JSON value: its members with their exact types (True is not 1)."""
    if type(value) is dict:
        return (dict, tuple(value), tuple(map(type, value.values())), tuple(value.values()))
    if type(value) is list:
        return (list, tuple(map(type, value)), tuple(value))
    return (type(value), value)


@dataclass(frozen=True, slots=True)
class _Context:
    """What strawberry's conversion needs of the schema."""

    scalar_registry: Mapping[object, Any]
    config: Any

    def graphql_name(self, argument: StrawberryArgument) -> str:
        """The argument's name in the schema."""
        return str(self.config.name_converter.from_argument(argument))


@dataclass(frozen=True, slots=True)
class _Variable:
    """One argument fed by a variable."""

    python_name: str
    variable: str
    convert: Callable[[Any], Any]
    nullable: bool  # an explicit null is the argument's value
    omittable: bool  # a missing value leaves the argument out (no default to apply)


@dataclass(frozen=True, slots=True)
class ArgumentPlan:
    """The arguments of one root field in one document."""

    static: dict[str, Any]  # converted once: literals and defaults
    variables: tuple[_Variable, ...]

    def convert(self, values: dict[str, Any] | None) -> dict[str, Any] | None:
        """The resolver's keyword arguments for the request's variables, or None."""
        kwargs = dict(self.static)
        for variable in self.variables:
            raw = values.get(variable.variable, _ABSENT) if values else _ABSENT
            if raw is _ABSENT:
                if not variable.omittable:
                    return None
                continue
            if raw is None:
                if not variable.nullable:
                    return None
                kwargs[variable.python_name] = None
                continue
            try:
                kwargs[variable.python_name] = variable.convert(raw)
            except _Refused:
                return None
        return kwargs


def compile_arguments(
    schema: GraphQLSchema,
    operation: OperationDefinitionNode,
    field: GraphQLField,
    node: FieldNode,
    definition: StrawberryField,
    scalar_registry: Mapping[object, Any],
    config: Any,
) -> ArgumentPlan | None:
    """The argument plan of the root field `node`, or None where it has none."""
    context = _Context(scalar_registry, config)
    by_name = {context.graphql_name(a): a for a in definition.arguments}
    if set(by_name) != set(field.args) or any(a.out_name for a in field.args.values()):
        return None
    if not all(_plain(a.type) for a in definition.arguments):
        return None
    declared = {d.variable.name.value: d for d in operation.variable_definitions or ()}
    nodes = {a.name.value: a for a in node.arguments or ()}
    static_args: dict[str, GraphQLArgument] = {}
    variables: list[_Variable] = []
    for name, arg in field.args.items():
        given = nodes.get(name)
        if given is None or not isinstance(given.value, VariableNode):
            if given is not None and _uses_variables(given.value):
                return None
            static_args[name] = arg
            continue
        declaration = declared.pop(given.value.name.value, None)
        if declaration is None or declaration.default_value is not None:
            return None  # used twice, or a default of its own
        variable_type = type_from_ast(schema, declaration.type)
        if variable_type is None:
            return None
        variable = given.value.name.value
        compiled = _variable(variable, arg, variable_type, by_name[name], context)
        if compiled is None:
            return None
        variables.append(compiled)
    if declared:  # a variable used elsewhere than as a root argument
        return None
    static = _static(field, node, static_args, definition.arguments, context)
    return None if static is None else ArgumentPlan(static, tuple(variables))


def _variable(
    variable: str,
    arg: GraphQLArgument,
    variable_type: Any,
    argument: StrawberryArgument,
    context: _Context,
) -> _Variable | None:
    variable_nullable = not isinstance(variable_type, GraphQLNonNull)
    argument_nullable = not isinstance(arg.type, GraphQLNonNull)
    if variable_nullable and not argument_nullable:
        return None
    named = variable_type.of_type if isinstance(variable_type, GraphQLNonNull) else variable_type
    convert = _SCALARS.get(named) or _Remembered(variable_type, argument, context)
    has_default = arg.default_value is not Undefined
    return _Variable(
        python_name=argument.python_name,
        variable=variable,
        convert=convert,
        nullable=variable_nullable,
        omittable=argument_nullable and not has_default,
    )


def _static(
    field: GraphQLField,
    node: FieldNode,
    args: dict[str, GraphQLArgument],
    arguments: list[StrawberryArgument],
    context: _Context,
) -> dict[str, Any] | None:
    """The converted literals and defaults (by graphql-core and strawberry themselves)."""
    if not args:
        return {}
    only = GraphQLField(field.type, args=args)
    literal = FieldNode(
        name=node.name,
        arguments=tuple(a for a in node.arguments or () if a.name.value in args),
    )
    try:
        coerced = get_argument_values(only, literal, _NO_VARIABLES)
        converted = convert_arguments(
            coerced, arguments, context.scalar_registry, context.config, None
        )
    except Exception:  # the normal path's to report
        return None
    return dict(converted)


def _uses_variables(value: Any) -> bool:
    if isinstance(value, VariableNode):
        return True
    for attribute in ("values", "fields"):
        for item in getattr(value, attribute, None) or ():
            if _uses_variables(getattr(item, "value", item)):
                return True
    return False


def _plain(type_: Any) -> bool:
    """Is `type_` converted without an input hook of its own (`from_input`)?"""
    while isinstance(type_, StrawberryOptional | StrawberryList):
        type_ = type_.of_type
    if not has_object_definition(type_):
        return True
    definition = type_.__strawberry_definition__
    if definition.from_input is not None:
        return False
    return all(_plain(f.type) for f in definition.fields)
