"""Query limits built once at schema creation: depth, cost, and what strawberry offers
(aliases, tokens, introspection). A rule class made per request would defeat the
validation cache, so each is created here, once per settings."""

from __future__ import annotations

from typing import Any

from graphql import (
    ASTValidationRule,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    ValidationRule,
)
from graphql.validation import ASTValidationContext
from strawberry.extensions import DisableIntrospection, MaxAliasesLimiter
from strawberry.extensions.query_depth_limiter import create_validator

from app.api.transport.refusals import RefusalCode, tag
from app.settings import Settings

# What a list field is assumed to return, for the cost estimate (lobby, hands, history).
LIST_SIZE = 10


def create_cost_rule(max_cost: int) -> type[ValidationRule]:
    """A validation rule refusing operations whose estimated cost exceeds `max_cost`: every
    field costs 1, and what is selected under a list counts LIST_SIZE times."""

    class QueryCostRule(ValidationRule):
        def enter_operation_definition(self, node: OperationDefinitionNode, *_: Any) -> None:
            schema = self.context.schema
            root = {
                OperationType.QUERY: schema.query_type,
                OperationType.MUTATION: schema.mutation_type,
                OperationType.SUBSCRIPTION: schema.subscription_type,
            }[node.operation]
            fragments = {
                d.name.value: d
                for d in self.context.document.definitions
                if isinstance(d, FragmentDefinitionNode)
            }
            if root is None:
                return
            cost = _selection_cost(node.selection_set, root, fragments, frozenset(), max_cost)
            if cost > max_cost:
                self.report_error(
                    GraphQLError(
                        f"the query is too expensive (estimated cost {cost}, limit {max_cost});"
                        " select less or fewer nested lists",
                        node,
                    )
                )

    return QueryCostRule


def _selection_cost(
    selection_set: SelectionSetNode | None,
    parent: GraphQLObjectType,
    fragments: dict[str, FragmentDefinitionNode],
    path: frozenset[str],
    cap: int,
) -> int:
    if selection_set is None:
        return 0
    total = 0
    for selection in selection_set.selections:
        if isinstance(selection, FieldNode):
            total += _field_cost(selection, parent, fragments, path, cap)
        elif isinstance(selection, InlineFragmentNode):
            total += _selection_cost(selection.selection_set, parent, fragments, path, cap)
        elif isinstance(selection, FragmentSpreadNode):
            name = selection.name.value
            fragment = fragments.get(name)
            if fragment is not None and name not in path:  # cycles are refused elsewhere
                total += _selection_cost(
                    fragment.selection_set, parent, fragments, path | {name}, cap
                )
        if total > cap:
            return total
    return total


def _field_cost(
    node: FieldNode,
    parent: GraphQLObjectType,
    fragments: dict[str, FragmentDefinitionNode],
    path: frozenset[str],
    cap: int,
) -> int:
    name = node.name.value
    if name.startswith("__"):
        return 1  # introspection is limited by depth and tokens instead
    definition = getattr(parent, "fields", {}).get(name)
    if definition is None:
        return 1  # unknown fields are refused by the standard rules
    field_type: Any = definition.type
    factor = 1
    while isinstance(field_type, GraphQLNonNull | GraphQLList):
        if isinstance(field_type, GraphQLList):
            factor *= LIST_SIZE
        field_type = field_type.of_type
    child_parent = field_type if isinstance(field_type, GraphQLObjectType) else parent
    children = _selection_cost(node.selection_set, child_parent, fragments, path, cap)
    return 1 + factor * children


class _TooComplexContext:
    """A validation context whose reported errors carry QUERY_TOO_COMPLEX (the limit rules
    report through their context, not through `ValidationRule.report_error`)."""

    def __init__(self, context: ASTValidationContext) -> None:
        self._context = context

    def report_error(self, error: GraphQLError) -> None:
        tag(error, RefusalCode.QUERY_TOO_COMPLEX)
        self._context.report_error(error)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def too_complex(rule: type[ASTValidationRule]) -> type[ASTValidationRule]:
    """`rule`, whose errors carry the code QUERY_TOO_COMPLEX."""

    class TooComplex(rule):  # type: ignore[valid-type,misc]
        def __init__(self, context: ASTValidationContext) -> None:
            super().__init__(_TooComplexContext(context))

    TooComplex.__name__ = f"TooComplex{rule.__name__}"
    return TooComplex


def limit_rules(settings: Settings) -> tuple[type[ASTValidationRule], ...]:
    """The limiting validation rules, shared by every request (the token limit is a parse
    option: app/api/operations.py)."""
    limits: list[type[ASTValidationRule]] = [
        create_validator(settings.max_query_depth, None),
        create_cost_rule(settings.max_query_cost),
        *MaxAliasesLimiter(max_alias_count=settings.max_aliases).validation_rules,
    ]
    rules = [too_complex(rule) for rule in limits]
    if not settings.introspection:
        rules += DisableIntrospection().validation_rules
    return tuple(rules)
