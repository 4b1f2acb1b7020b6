"""A table's `evolve` is `dataclasses.replace`: the same table for any set of changed
fields, the original untouched, and an unknown field refused."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.services.tables.snapshot import JoinPolicy, TableSnapshot, TableStatus, Visibility

FIELDS = [f.name for f in dataclasses.fields(TableSnapshot)]


def a_table() -> TableSnapshot:
    return TableSnapshot(
        id="t1",
        name="Friday",
        host_id="p1",
        host_name="ann",
        visibility=Visibility.PUBLIC,
        join_policy=JoinPolicy.OPEN,
        spectating=True,
        status=TableStatus.WAITING,
        version=3,
        occupants=(None, None, None, None),
        game=None,
    )


@given(st.dictionaries(st.sampled_from(FIELDS), st.integers() | st.text(max_size=3)))
def test_evolve_is_dataclasses_replace(changes: dict[str, Any]) -> None:
    table = a_table()
    before = dataclasses.asdict(table)
    evolved = table.evolve(**changes)
    assert evolved == dataclasses.replace(table, **changes)
    assert dataclasses.asdict(table) == before
    assert evolved is not table


def test_evolve_refuses_an_unknown_field() -> None:
    with pytest.raises(TypeError, match="no field colour"):
        a_table().evolve(version=4, colour="red")


def test_evolve_may_skip_init_as_every_field_is_set_by_it_alone() -> None:
    # evolve copies the attributes: right only while __init__ does nothing more.
    assert not hasattr(TableSnapshot, "__post_init__")
    assert all(f.init for f in dataclasses.fields(TableSnapshot))
