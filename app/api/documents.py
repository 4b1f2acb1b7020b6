"""What every operation of one schema shares, on strawberry's path and the fast path
alike: one cache of parsed and validated documents keyed by the document's text, the
limits, and the masking of unexpected errors.

The cache keys by the text, not by the document (graphql-core hashes a document node by
node): a text maps to one document, validated once against the schema's one rule set."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from graphql import ASTValidationRule, DocumentNode, GraphQLError, GraphQLSchema
from graphql.language.parser import parse
from strawberry.schema.schema import validate_document

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
