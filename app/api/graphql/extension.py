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

The document cache and the masking are app/api/documents.py's, shared with the fast
path."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

from strawberry.extensions import SchemaExtension
from strawberry.types.graphql import OperationType

from app.api import fastpath
from app.api.documents import OperationConfig
from app.api.graphql.log_fields import attach_operation_of
from app.api.metrics import REQUESTS, count_errors
from app.api.transport.refusals import RefusalCode, parse_error_code, tag

log = logging.getLogger("app.api.operations")


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
        context = self.execution_context
        attach_operation_of(context.graphql_document, context.operation_name, context.variables)
        operation_type = context.operation_type
        self._subscription = operation_type is OperationType.SUBSCRIPTION
        if not fastpath.resuming():  # a parked operation run again is no new one
            REQUESTS.labels(operation_type.value).inc()
            if self._subscription:
                log.debug("subscription started")  # the line's fields say which
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
