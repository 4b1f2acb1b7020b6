"""The libraries whose internals the server patches are bounded, installed within their
bounds, and locked: uv.lock matches pyproject.toml."""

from __future__ import annotations

import subprocess
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"

# The server subclasses or patches private parts of these (app/api/): graphql-core's
# Executor and GraphQLResolveInfoHelpers, uvicorn's HttpToolsProtocol, RequestResponseCycle
# and WebSocketsSansIOProtocol (over websockets), strawberry's WebSocket handlers,
# starlette's CORSMiddleware. A release past the checked one may change any of them.
PATCHED_LIBRARIES = ("graphql-core", "strawberry-graphql", "uvicorn", "websockets", "starlette")

# Specifier operators that cap a version from above (`~=3.3.2` means `>=3.3.2,<3.4`).
UPPER_BOUNDING = frozenset({"<", "<=", "==", "~=", "==="})


def declared_requirements(pyproject: Path) -> dict[str, Requirement]:
    """The project's runtime requirements, by canonical name."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    requirements = (Requirement(line) for line in project["dependencies"])
    return {canonicalize_name(req.name): req for req in requirements}


def has_upper_bound(requirement: Requirement) -> bool:
    """Whether some specifier of `requirement` keeps out every release past a point."""
    return any(spec.operator in UPPER_BOUNDING for spec in requirement.specifier)


def as_written(requirement: Requirement) -> str:
    """The version bounds of `requirement`, lower ones first (as pyproject.toml has them)."""
    specs = sorted(
        requirement.specifier, key=lambda spec: (spec.operator.startswith("<"), str(spec))
    )
    return ",".join(str(spec) for spec in specs)


def patched_library_problem(
    name: str, requirement: Requirement | None, installed: str | None
) -> str | None:
    """Why library `name` (declared as `requirement`, `installed` at that version) is not
    fit for the server's patches; None when it is."""
    if requirement is None:
        return f"{name} is not declared in pyproject.toml's dependencies"
    if not has_upper_bound(requirement):
        return (
            f"{name} has no upper bound in pyproject.toml ({requirement}): the server patches"
            " its internals, so it must stop before the next minor release"
        )
    if installed is None:
        return f"{name} is not installed"
    if not requirement.specifier.contains(installed, prereleases=True):
        return (
            f"{name} {installed} is installed, but the fast path's patches were written for"
            f" {name}{as_written(requirement)} (pyproject.toml): check the patches under"
            " app/api/ against the new release, then move the bound; or run with"
            " SPADES_FASTPATH=off"
        )
    return None


def installed_version(name: str) -> str | None:
    """The version of `name` in this environment, if any."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@pytest.mark.parametrize("name", PATCHED_LIBRARIES)
def test_patched_library_is_bounded_and_installed_within_its_bounds(name: str) -> None:
    requirement = declared_requirements(PYPROJECT).get(name)
    assert patched_library_problem(name, requirement, installed_version(name)) is None


def test_release_past_the_bound_is_refused_with_what_to_do() -> None:
    requirement = Requirement("graphql-core>=3.3.2,<3.4")
    problem = patched_library_problem("graphql-core", requirement, "3.4.0")
    assert problem is not None
    assert problem.startswith("graphql-core 3.4.0 is installed")
    assert "written for graphql-core>=3.3.2,<3.4 (pyproject.toml)" in problem
    assert "SPADES_FASTPATH=off" in problem


def test_prerelease_of_the_next_minor_is_refused() -> None:
    requirement = Requirement("uvicorn[standard]>=0.30,<0.56")
    assert patched_library_problem("uvicorn", requirement, "0.56.0rc1") is not None


def test_release_below_the_floor_is_refused() -> None:
    requirement = Requirement("strawberry-graphql>=0.312.4,<0.342")
    assert patched_library_problem("strawberry-graphql", requirement, "0.312.3") is not None


def test_requirement_without_upper_bound_is_refused() -> None:
    requirement = Requirement("uvicorn[standard]>=0.30")
    problem = patched_library_problem("uvicorn", requirement, "0.55.0")
    assert problem is not None
    assert "no upper bound" in problem


def test_compatible_release_counts_as_an_upper_bound() -> None:
    assert has_upper_bound(Requirement("graphql-core~=3.3.2"))
    assert not has_upper_bound(Requirement("graphql-core>=3.3.2,!=3.4.0"))


def test_undeclared_library_is_refused() -> None:
    assert patched_library_problem("websockets", None, "17.4") is not None


def test_lock_matches_pyproject() -> None:
    # The lock records pyproject's requirements, so this needs no index (--offline).
    done = subprocess.run(
        ["bash", str(ROOT / "scripts" / "uv"), "lock", "--check", "--offline"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (
        "uv.lock does not match pyproject.toml; relock with: bash scripts/uv lock\n" + done.stderr
    )
