"""`spades serve` under tracemalloc: on SIGUSR1 the server writes a snapshot of its live
allocations to the file named by SPADES_MEMPROBE_OUT (written whole, then renamed).

Run as a file by the build's own Python (python memprobe.py serve --port ...), so that
it measures whichever build `app` is installed from."""

from __future__ import annotations

import gc
import json
import os
import signal
import sys
import tracemalloc
import types
from pathlib import Path
from types import FrameType

FRAMES = 8  # enough to see who allocated under library code


def _owners(objects: list[object]) -> dict[int, str]:
    """Who holds each object that another object refers to: id -> the holder's class.
    (By gc.get_referents: reading `__dict__` would create the dicts that CPython keeps
    inline until then, and so change what is measured.)"""
    owners: dict[int, str] = {}
    for obj in objects:
        holder = type(obj)  # by type alone: a dead weak proxy raises on any other use
        if holder.__module__ == "builtins" or issubclass(holder, type):
            continue
        name = holder.__qualname__
        for referent in gc.get_referents(obj):
            owners.setdefault(id(referent), name)
    return owners


def _kind(obj: object, owners: dict[int, str]) -> str:
    """A census key: the type, with the code of a coroutine or generator and the owner of a
    container or an object held as an attribute."""
    kind = type(obj)
    name = f"{kind.__module__}.{kind.__qualname__}"
    # By type alone: some objects make up any attribute asked of them (ctypes' library
    # loaders would load a library named "cr_code"), a dead weak proxy raises.
    if kind is types.CoroutineType:
        return f"{name} {obj.cr_code.co_qualname}"  # type: ignore[attr-defined]
    if kind is types.AsyncGeneratorType:
        return f"{name} {obj.ag_code.co_qualname}"  # type: ignore[attr-defined]
    if kind is types.GeneratorType:
        return f"{name} {obj.gi_code.co_qualname}"  # type: ignore[attr-defined]
    owner = owners.get(id(obj))
    return f"{name} in {owner}" if owner is not None else name


def census() -> dict[str, list[int]]:
    """The objects the collector tracks, by kind (`_kind`): [count, bytes by
    sys.getsizeof]. It names what the allocation sites cannot (a frame, a task, a dict of
    which class)."""
    objects = gc.get_objects()
    owners = _owners(objects)
    counts: dict[str, list[int]] = {}
    for obj in objects:
        entry = counts.setdefault(_kind(obj, owners), [0, 0])
        entry[0] += 1
        entry[1] += sys.getsizeof(obj)
    return counts


def snapshot(_signum: int, _frame: FrameType | None) -> None:
    """Collect, then dump a census and a snapshot of what lives now."""
    gc.collect()
    out = Path(os.environ["SPADES_MEMPROBE_OUT"])
    temporary = out.with_suffix(".tmp")
    tracemalloc.take_snapshot().dump(str(temporary))
    out.with_suffix(".census.json").write_text(json.dumps(census()))
    temporary.replace(out)


def main() -> None:
    """Trace allocations from the start, then run the server's own command line."""
    tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR1, snapshot)
    from app.cli import main as spades

    sys.argv[0] = "spades"
    spades()


if __name__ == "__main__":
    main()
