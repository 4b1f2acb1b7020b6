"""Every per-operation hook of the schema in one extension, with one cache of parsed and
validated documents keyed by the document's text.

Strawberry runs each extension's hooks through a context manager per hook and per
operation (and per streamed result), so seven small extensions (the error codes of
parsing and validation, the limit rules, the token limit, the parser and validation
caches, error masking, metrics) cost several hundred calls per operation before any
resolver runs. This one extension does what they did, in the same order:

- operation: the token limit (a parse option) and the limit rules (validation rules)
  are set first; at the end, errors are counted (operations that did not get to execute
  as "invalid"), then unexpected errors are masked;
- parse: the cached document of the text (a document that does not parse is left to
  strawberry's own parse, which reports the error), then parse errors get their code;
- validate: the cached errors of the document, then validation errors get their code;
- execute: the operation is counted by type;
- each streamed result: its unexpected errors are masked, then counted.

The cache keys by the text, not by the document (graphql-core hashes a document node by
node): a text maps to one document, validated once against the schema's one rule set."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphql import ASTValidationRule, DocumentNode, GraphQLError, GraphQLSchema
from graphql.language.parser import parse
from strawberry.extensions import SchemaExtension
from strawberry.schema.schema import validate_document
from strawberry.types.graphql import OperationType

from app.api.fastpath.live import LIVE_OPERATION
from app.api.metrics import REQUESTS, count_errors
from app.api.transport.refusals import RefusalCode, parse_error_code, tag

DOCUMENTS_CACHED = 1024


@dataclass(slots=True)
class _Entry:
    """One text's document, and its validation errors against `rules` once known."""

    document: DocumentNode
    rules: tuple[type[ASTValidationRule], ...] | None = None
    errors: list[GraphQLError] | None = None


@dataclass
class DocumentCache:
    """The least recently used texts' documents and validation errors (a bounded map)."""

    max_tokens: int
    maxsize: int = DOCUMENTS_CACHED
    _entries: OrderedDict[str, _Entry] = field(default_factory=OrderedDict)

    def document(self, text: str) -> DocumentNode:
        """The document of `text` (parsed once); the parser's error if it does not parse
        (not cached: a text that fails is parsed again, as strawberry's cache did)."""
        entry = self._entries.get(text)
        if entry is None:
            entry = _Entry(parse(text, max_tokens=self.max_tokens))
            self._entries[text] = entry
            if len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        else:
            self._entries.move_to_end(text)
        return entry.document

    def errors(
        self,
        schema: GraphQLSchema,
        text: str | None,
        document: DocumentNode,
        rules: tuple[type[ASTValidationRule], ...],
    ) -> list[GraphQLError]:
        """The validation errors of `document` (validated once per text and rule set)."""
        entry = self._entries.get(text) if text is not None else None
        if entry is not None and entry.document is document and entry.rules is rules:
            assert entry.errors is not None
            return entry.errors
        errors = validate_document(schema, document, rules)
        if entry is not None and entry.document is document:
            entry.rules, entry.errors = rules, errors
        return errors


@dataclass
class OperationConfig:
    """What every operation of one schema shares: its limits, rules and caches."""

    max_tokens: int
    extra_rules: tuple[type[ASTValidationRule], ...]
    should_mask: Callable[[GraphQLError], bool]
    mask_message: str
    documents: DocumentCache = field(init=False)
    _base: tuple[type[ASTValidationRule], ...] | None = field(default=None, init=False)
    _rules: tuple[type[ASTValidationRule], ...] = field(default=(), init=False)

    def __post_init__(self) -> None:
        self.documents = DocumentCache(self.max_tokens)

    def rules_after(
        self, base: tuple[type[ASTValidationRule], ...]
    ) -> tuple[type[ASTValidationRule], ...]:
        """`base` and the extra rules, as one tuple object while `base` stays the same
        (the validation cache recognises its rule set by identity)."""
        if base != self._base:
            self._base, self._rules = base, base + self.extra_rules
        return self._rules

    def mask(self, errors: Sequence[GraphQLError]) -> list[GraphQLError]:
        """`errors`, the unexpected ones replaced by the masked message (as MaskErrors)."""
        return [
            GraphQLError(
                message=self.mask_message,
                nodes=e.nodes,
                source=e.source,
                positions=e.positions,
                path=e.path,
                original_error=None,
            )
            if self.should_mask(e)
            else e
            for e in errors
        ]


class Operations(SchemaExtension):
    """The server's one schema extension (see the module's docstring)."""

    def __init__(self, config: OperationConfig) -> None:
        self.config = config
        self._counted = False  # the operation got to execute
        self._subscription = False  # known once executing
        self._streamed = False  # results were masked one by one as they streamed

    def on_operation(self) -> Iterator[None]:
        context = self.execution_context
        context.parse_options["max_tokens"] = self.config.max_tokens
        context.validation_rules = self.config.rules_after(context.validation_rules)
        yield
        if not self._counted:  # the document did not parse or validate
            REQUESTS.labels("invalid").inc()
        if not self._subscription:
            count_errors(context.result)
        if not self._streamed:
            self._mask(context.result)
            self._mask(getattr(context.result, "initial_result", None))

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context
        if context.query is not None and context.graphql_document is None:
            try:
                context.graphql_document = self.config.documents.document(context.query)
            except Exception:  # strawberry parses it again and reports the error
                context.graphql_document = None
        yield
        for error in context.pre_execution_errors or []:
            tag(error, parse_error_code(error))

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context
        assert context.graphql_document is not None
        context.pre_execution_errors = self.config.documents.errors(
            context.schema._schema,
            context.query,
            context.graphql_document,
            context.validation_rules,
        )
        yield
        for error in context.pre_execution_errors or []:
            tag(error, RefusalCode.GRAPHQL_VALIDATION_FAILED)

    def on_execute(self) -> Iterator[None]:
        self._counted = True
        operation_type = self.execution_context.operation_type
        self._subscription = operation_type is OperationType.SUBSCRIPTION
        live = LIVE_OPERATION.get()
        if live is None or live.parked is None:  # a parked operation run again is no new one
            REQUESTS.labels(operation_type.value).inc()
        yield

    def on_stream_result(self, result: Any) -> Iterator[None]:
        self._streamed = True
        self._mask(result)
        for part in getattr(result, "incremental", None) or ():
            self._mask(part)
        for part in getattr(result, "completed", None) or ():
            self._mask(part)
        if self._subscription:
            count_errors(result)
        yield

    def _mask(self, result: object) -> None:
        errors = getattr(result, "errors", None)
        if errors:
            result.errors = self.config.mask(errors)  # type: ignore[attr-defined]


def operations_extension(config: OperationConfig) -> Callable[[], SchemaExtension]:
    """The factory strawberry calls per operation."""
    return lambda: Operations(config)
