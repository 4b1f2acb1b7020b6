"""The persisted query cache keeps at most so many documents and so many bytes, dropping
the least recently used first."""

from __future__ import annotations

from app.api.transport.persisted import PersistedQueryCache


def test_the_least_recently_used_document_goes_first() -> None:
    cache = PersistedQueryCache(max_entries=2, max_document_bytes=100)
    cache.put("a", "{ a }")
    cache.put("b", "{ b }")
    assert cache.get("a") == "{ a }"  # now b is the least recently used
    cache.put("c", "{ c }")
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == ("{ a }", None, "{ c }")


def test_the_total_size_is_bounded_too() -> None:
    cache = PersistedQueryCache(max_entries=100, max_document_bytes=50, max_total_bytes=100)
    for name in "abcde":
        cache.put(name, name * 40)
    assert len(cache) == 2 and cache.get("e") == "e" * 40 and cache.get("a") is None
    cache.put("big", "x" * 60)  # over the size one document may have
    assert cache.get("big") is None


def test_no_cache_when_turned_off() -> None:
    cache = PersistedQueryCache(max_entries=0, max_document_bytes=100)
    cache.put("a", "{ a }")
    assert cache.get("a") is None
