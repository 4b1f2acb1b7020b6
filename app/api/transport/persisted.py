"""Which document a request runs: its `query`, a hash of Apollo's automatic persisted
queries (`extensions.persistedQuery.sha256Hash`), or, in trusted-documents mode, only an
operation of the manifest (by `documentId`, by hash, or by its exact text)."""

from __future__ import annotations

import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from app.api.transport.refusals import PERSISTED_QUERY_NOT_FOUND_MESSAGE, Refusal, RefusalCode

SHA256_HEX = re.compile(r"^[0-9a-f]{64}$")
APQ_VERSION = 1


def sha256_hex(text: str) -> str:
    """The hash Apollo's PersistedQueryLink sends for a document."""
    return hashlib.sha256(text.encode()).hexdigest()


# However many entries are allowed, the documents kept never take more than this.
MAX_TOTAL_BYTES = 8 * 1024 * 1024


class PersistedQueryCache:
    """A bounded LRU map hash -> document (by count and by total size); the least recently
    used entry goes first. Every entry passed parsing and validation once (see
    `Documents.remember`), and runs through the same limits again each time, as if its
    text had been sent."""

    def __init__(
        self, max_entries: int, max_document_bytes: int, max_total_bytes: int = MAX_TOTAL_BYTES
    ) -> None:
        self.max_entries = max_entries
        self.max_document_bytes = max_document_bytes
        self.max_total_bytes = max_total_bytes
        self._entries: OrderedDict[str, str] = OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, digest: str) -> str | None:
        """The document of `digest`, refreshed as recently used."""
        document = self._entries.get(digest)
        if document is not None:
            self._entries.move_to_end(digest)
        return document

    def put(self, digest: str, document: str) -> None:
        """Remember a document (not one larger than a request body may be)."""
        size = len(document.encode())
        if self.max_entries <= 0 or size > min(self.max_document_bytes, self.max_total_bytes):
            return
        if digest in self._entries:
            self._entries.move_to_end(digest)
            return
        self._entries[digest] = document
        self._bytes += size
        while len(self._entries) > self.max_entries or self._bytes > self.max_total_bytes:
            _, dropped = self._entries.popitem(last=False)
            self._bytes -= len(dropped.encode())


@dataclass(frozen=True, slots=True)
class TrustedDocuments:
    """The operations a trusted-documents manifest allows: id -> document."""

    by_id: dict[str, str]
    texts: frozenset[str]

    @classmethod
    def load(cls, path: str | Path) -> TrustedDocuments:
        """Read a manifest: GraphQL Code Generator's persisted documents (`{hash: document}`)
        or Apollo's persisted query manifest (`{"operations": [{"id", "body"}, ...]}`)."""
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        by_id: dict[str, str] = {}
        if isinstance(raw, dict) and isinstance(raw.get("operations"), list):
            for operation in raw["operations"]:
                if not isinstance(operation, dict):
                    raise ValueError(f"{path}: an operation is not an object")
                key, body = operation.get("id"), operation.get("body")
                if not isinstance(key, str) or not isinstance(body, str):
                    raise ValueError(f"{path}: an operation lacks a string id or body")
                by_id[key] = body
        elif isinstance(raw, dict):
            for key, body in raw.items():
                if not isinstance(body, str):
                    raise ValueError(f"{path}: the document of {key!r} is not a string")
                by_id[key] = body
        else:
            raise ValueError(f"{path}: a manifest is a JSON object")
        # Apollo's link sends the sha256 of the document: accept it for every entry too.
        for body in list(by_id.values()):
            by_id.setdefault(sha256_hex(body), body)
        return cls(by_id=by_id, texts=frozenset(by_id.values()))


@dataclass(frozen=True, slots=True)
class Resolved:
    """The document to run, and the APQ hash to remember it under once it validates."""

    query: str | None
    register: str | None = None


def _persisted_hash(extensions: dict[str, object] | None) -> str | None:
    """The sha256Hash of `extensions.persistedQuery`, checked; None without one."""
    if not extensions or extensions.get("persistedQuery") is None:
        return None
    persisted = extensions["persistedQuery"]
    if not isinstance(persisted, dict):
        raise Refusal(RefusalCode.BAD_REQUEST, "`extensions.persistedQuery` must be an object")
    if persisted.get("version", APQ_VERSION) != APQ_VERSION:
        raise Refusal(RefusalCode.BAD_REQUEST, "only version 1 of persisted queries is known")
    digest = persisted.get("sha256Hash")
    if not isinstance(digest, str) or not SHA256_HEX.match(digest):
        raise Refusal(
            RefusalCode.BAD_REQUEST,
            "`extensions.persistedQuery.sha256Hash` must be 64 lowercase hex digits",
        )
    return digest


class Documents:
    """Turns a request's query, persisted-query hash or document id into the document to
    run (the same for HTTP and WebSocket)."""

    def __init__(self, cache: PersistedQueryCache, trusted: TrustedDocuments | None) -> None:
        self.cache = cache
        self.trusted = trusted

    def resolve(
        self,
        query: str | None,
        extensions: dict[str, object] | None,
        document_id: object = None,
    ) -> Resolved:
        """The document of a request; Refusal when there is none it may run."""
        digest = _persisted_hash(extensions)
        if document_id is not None and not isinstance(document_id, str):
            raise Refusal(RefusalCode.BAD_REQUEST, "`documentId` must be a string")
        if self.trusted is not None:
            return Resolved(self._trusted(query, digest, document_id))
        if document_id is not None and not query and digest is None:
            raise Refusal(
                RefusalCode.PERSISTED_QUERY_NOT_FOUND,
                "documentId needs a trusted-documents manifest; send the query instead",
            )
        if digest is None:
            return Resolved(query)
        if query:
            if sha256_hex(query) != digest:
                raise Refusal(
                    RefusalCode.BAD_REQUEST, "provided sha does not match query (sha256Hash)"
                )
            return Resolved(query, register=digest)
        known = self.cache.get(digest)
        if known is None:
            raise Refusal(RefusalCode.PERSISTED_QUERY_NOT_FOUND, PERSISTED_QUERY_NOT_FOUND_MESSAGE)
        return Resolved(known)

    def _trusted(self, query: str | None, digest: str | None, document_id: str | None) -> str:
        assert self.trusted is not None
        for key in (document_id, digest):
            if key is not None:
                document = self.trusted.by_id.get(key)
                if document is None:
                    raise Refusal(
                        RefusalCode.OPERATION_NOT_ALLOWED,
                        "this server runs only the operations of its trusted-documents manifest",
                    )
                if query and query != document:
                    raise Refusal(
                        RefusalCode.BAD_REQUEST, "the query is not the document of its id"
                    )
                return document
        if query and query in self.trusted.texts:
            return query
        raise Refusal(
            RefusalCode.OPERATION_NOT_ALLOWED,
            "this server runs only the operations of its trusted-documents manifest",
        )

    def remember(self, resolved: Resolved) -> None:
        """Keep a hashed document that parsed and validated, for later hash-only requests."""
        if resolved.register is not None and resolved.query is not None:
            self.cache.put(resolved.register, resolved.query)
