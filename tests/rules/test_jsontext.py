"""Compact JSON text is exactly json.dumps's with compact separators."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.compact_json import dumps

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers() | st.booleans(), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(JSON)
def test_the_text_is_json_dumps_compact(value: Any) -> None:
    assert dumps(value) == json.dumps(value, separators=(",", ":"))


def test_special_floats_and_unicode_as_json_writes_them() -> None:
    value = {"n": math.nan, "i": math.inf, "s": 'é\u2028"', "k": [1.5, -0.0]}
    assert dumps(value) == json.dumps(value, separators=(",", ":"))


def test_a_value_json_cannot_write_is_refused_alike() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        dumps({"x": object()})
    with pytest.raises(TypeError, match="not JSON serializable"):
        json.dumps({"x": object()})
