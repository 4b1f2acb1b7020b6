"""Compact JSON text, `json.dumps(value, separators=(",", ":"))`, from one encoder built
once. json.dumps builds a JSONEncoder and its C encoder on every call (three Python calls
before any encoding), and every move encodes several documents: its table row, its
answer, each subscriber's update."""

from __future__ import annotations

import json
from collections.abc import Callable
from json import encoder as _encoder
from typing import Any


def _unserializable(value: Any) -> Any:
    raise TypeError(f"Object of type {value.__class__.__name__} is not JSON serializable")


def _make_chunks() -> Callable[[Any, int], Any] | None:
    make = getattr(_encoder, "c_make_encoder", None)  # None without CPython's accelerator
    if make is None:
        return None
    # No circular-reference markers: every document encoded here is a tree (a cycle
    # would end in RecursionError rather than ValueError).
    chunks: Callable[[Any, int], Any] = make(
        None, _unserializable, _encoder.encode_basestring_ascii, None, ":", ",", False, False, True
    )
    return chunks


_CHUNKS = _make_chunks()


def dumps(value: Any) -> str:
    """`json.dumps(value, separators=(",", ":"))`, with one Python call."""
    if _CHUNKS is None:
        return json.dumps(value, separators=(",", ":"))
    return "".join(_CHUNKS(value, 0))
