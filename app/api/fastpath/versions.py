"""The versions the fast path was written for: the bounds of its libraries in the
project's own requirements (pyproject.toml, as installed), checked against what is
installed, so a library upgraded past them turns the fast path off instead of breaking
(tests/test_dependencies.py fails on the same condition)."""

from __future__ import annotations

from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

DISTRIBUTION = "spades-online"
# The libraries whose internals the fast path patches or subclasses.
PATCHED_LIBRARIES = ("graphql-core", "strawberry-graphql", "uvicorn", "websockets", "starlette")


def _requirements() -> dict[str, Requirement]:
    try:
        lines = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:  # run from a tree that is not installed
        return {}
    requirements = (Requirement(line) for line in lines)
    return {canonicalize_name(r.name): r for r in requirements if r.marker is None}


def unsupported() -> list[str]:
    """One line per patched library installed outside the bounds it was written for."""
    problems = []
    for name, requirement in _requirements().items():
        if name not in PATCHED_LIBRARIES:
            continue
        try:
            installed = metadata.version(name)
        except metadata.PackageNotFoundError:
            problems.append(f"{name} is not installed")
            continue
        if not requirement.specifier.contains(installed, prereleases=True):
            problems.append(f"{name} {installed} is outside {requirement.specifier}")
    return problems
