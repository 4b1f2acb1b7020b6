"""The container files, checked without a Docker daemon: the Dockerfile passes hadolint,
compose.yaml is valid against the Compose Specification, Caddy accepts the proxy's
configuration; and they say what an operator relies on. The image installs through the
very scripts CI runs (its install path is run here into a fresh venv), runs as no root
and checks its health; compose runs PostgreSQL (health-checked), Redis, two servers on
one database, broker and secret, and a proxy that sends work only to ready servers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.server import ROOT

BIN = Path(sys.executable).parent
DOCKERFILE = ROOT / "Dockerfile"
COMPOSE = ROOT / "compose.yaml"
CADDYFILE = ROOT / "deploy" / "Caddyfile"
ENTRYPOINT = ROOT / "deploy" / "entrypoint"


def run(
    *command: str | Path, env: dict[str, str] | None = None, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run a command to its end (in the repository, unless told), capturing its output."""
    return subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def instructions(path: Path) -> list[tuple[str, str]]:
    """A Dockerfile's instructions (continued lines joined), comments left out."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    pairs = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            keyword, _, rest = line.strip().partition(" ")
            pairs.append((keyword.upper(), rest))
    return pairs


def compose() -> dict[str, Any]:
    data = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))  # merge keys resolved
    assert isinstance(data, dict)
    return data


# ---------------------------------------------------------------------------- linters


def test_the_dockerfile_passes_hadolint() -> None:
    done = run(BIN / "hadolint", DOCKERFILE)
    assert (done.returncode, done.stdout) == (0, ""), done.stdout + done.stderr


def test_hadolint_refuses_a_careless_dockerfile(tmp_path: Path) -> None:
    careless = tmp_path / "Dockerfile"
    careless.write_text("FROM python:latest\nRUN cd /src && pip install spades\n")
    done = run(BIN / "hadolint", careless)
    assert done.returncode != 0
    assert {"DL3007", "DL3003", "DL3013"} <= set(re.findall(r"DL\d{4}", done.stdout))


def test_compose_file_is_valid_against_the_compose_specification() -> None:
    done = run(BIN / "check-jsonschema", "--builtin-schema", "vendor.compose-spec", COMPOSE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_check_refuses_an_invalid_file(tmp_path: Path) -> None:
    invalid = tmp_path / "compose.yaml"
    invalid.write_text("services:\n  web:\n    image: x\n    restart_policy: sometimes\n")
    done = run(BIN / "check-jsonschema", "--builtin-schema", "vendor.compose-spec", invalid)
    assert done.returncode != 0 and "restart_policy" in done.stdout


def caddy() -> str:
    """Debian's caddy (scripts/_setup_checkers installs it); CI may not go without."""
    found = shutil.which("caddy")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("caddy is not installed (scripts/_setup_checkers installs it)")
        pytest.skip("caddy is not installed: scripts/_setup_checkers installs it")
    return found


def test_caddy_accepts_the_proxy_configuration() -> None:
    done = run(caddy(), "validate", "--config", CADDYFILE, "--adapter", "caddyfile")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Valid configuration" in done.stdout + done.stderr


def test_caddy_refuses_a_configuration_with_a_mistake(tmp_path: Path) -> None:
    broken = tmp_path / "Caddyfile"
    broken.write_text(CADDYFILE.read_text().replace("health_uri", "health_url"))
    done = run(caddy(), "validate", "--config", broken, "--adapter", "caddyfile")
    assert done.returncode != 0 and "health_url" in done.stderr


# ---------------------------------------------------------------------------- the image


def test_the_image_installs_only_through_the_scripts_ci_runs() -> None:
    runs = [rest for keyword, rest in instructions(DOCKERFILE) if keyword == "RUN"]
    assert "npm ci --no-audit --no-fund --loglevel=error" in runs
    assert "bash scripts/build_web" in runs
    assert "SPADES_INSTALL=dependencies bash -c 'source scripts/_setup'" in runs
    assert "SPADES_INSTALL=server bash -c 'source scripts/_setup'" in runs
    # No second way of installing Python packages to drift from the lock.
    assert not [r for r in runs if re.search(r"\bpip\b|\buv\b|requirements", r)], runs


def test_the_image_runs_as_no_root_checks_its_health_and_execs_the_server() -> None:
    final = instructions(DOCKERFILE)
    last_stage = max(i for i, (keyword, _) in enumerate(final) if keyword == "FROM")
    image = final[last_stage:]
    (user,) = [rest for keyword, rest in image if keyword == "USER"]
    assert re.fullmatch(r"[1-9]\d*:[1-9]\d*", user)  # numeric, and not 0
    (health,) = [rest for keyword, rest in image if keyword == "HEALTHCHECK"]
    assert "/healthz" in health
    assert ("ENTRYPOINT", '["/opt/spades/entrypoint"]') in image
    script = ENTRYPOINT.read_text()
    assert "spades migrate\n  exec spades serve" in script
    assert os.access(ENTRYPOINT, os.X_OK)


def test_what_the_image_copies_is_in_its_build_context() -> None:
    ignored = (ROOT / ".dockerignore").read_text().splitlines()
    allowed = {line[1:].rstrip("/") for line in ignored if line.startswith("!")}
    for keyword, rest in instructions(DOCKERFILE):
        if keyword != "COPY" or rest.startswith("--from"):
            continue
        for source in rest.split()[:-1]:
            assert any(source == a or source.startswith(a + "/") for a in allowed), source


def test_the_image_install_path_installs_the_server_from_the_lock_alone(tmp_path: Path) -> None:
    """What the Dockerfile's two install steps do, run here: the dependencies, then the
    server as a regular package; no test or lint tool comes along."""
    venv = tmp_path / "venv"
    for step in ("dependencies", "server"):
        done = run(
            "bash", "-c", "source scripts/_setup",
            env={"SPADES_VENV": str(venv), "SPADES_INSTALL": step, "CI": ""},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    # Imported from outside the checkout: the package installed, not the source.
    where = run(python, "-c", "import app; print(app.__file__)", cwd=tmp_path)
    assert where.stdout.startswith(str(venv)), where.stdout
    assert run(python, "-c", "import pytest", cwd=tmp_path).returncode != 0
    imports = "import pythonjsonlogger, uvicorn, asyncpg, app.store.migrations"
    assert run(python, "-c", imports, cwd=tmp_path).returncode == 0
    database = tmp_path / "spades.db"
    migrated = run(
        ENTRYPOINT,
        "migrate",
        env={
            "PATH": f"{venv / 'bin'}:{os.environ['PATH']}",
            "SPADES_DATABASE_URL": f"sqlite+aiosqlite:///{database}",
        },
        cwd=tmp_path,
    )
    assert migrated.returncode == 0, migrated.stderr
    assert "is up to date" in migrated.stderr and database.is_file()


# ---------------------------------------------------------------------------- compose


def test_compose_runs_two_servers_on_one_database_broker_and_secret() -> None:
    services = compose()["services"]
    servers = [services["spades-1"], services["spades-2"]]
    shared = ("SPADES_DATABASE_URL", "SPADES_BROKER_URL", "SPADES_SECRET")
    first, second = ({k: s["environment"][k] for k in shared} for s in servers)
    assert first == second
    assert first["SPADES_DATABASE_URL"].startswith("postgresql+asyncpg://")
    assert first["SPADES_DATABASE_URL"].endswith("@postgres:5432/spades")
    assert first["SPADES_BROKER_URL"] == "redis://redis:6379/0"
    for server in servers:
        assert server["depends_on"]["postgres"] == {"condition": "service_healthy"}
        assert server["depends_on"]["migrate"] == {"condition": "service_completed_successfully"}
    assert services["migrate"]["command"] == ["migrate"]


def test_postgresql_is_health_checked_with_pg_isready() -> None:
    test = compose()["services"]["postgres"]["healthcheck"]["test"]
    assert test[0] == "CMD-SHELL" and test[1].startswith("pg_isready")


def test_the_proxy_passes_to_both_servers_and_checks_their_readiness() -> None:
    proxy = compose()["services"]["proxy"]
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    assert set(proxy["depends_on"]) == {"spades-1", "spades-2"}
    caddyfile = CADDYFILE.read_text()
    assert re.search(r"reverse_proxy spades-1:8000 spades-2:8000 \{", caddyfile)
    assert re.search(r"^\s*health_uri /readyz$", caddyfile, re.MULTILINE)


def test_the_systemd_unit_shown_in_the_docs_is_the_one_shipped() -> None:
    docs = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    (excerpt,) = re.findall(r"```ini\n(.*?)```", docs, re.DOTALL)
    unit = (ROOT / "deploy" / "spades.service").read_text(encoding="utf-8").splitlines()
    for line in excerpt.splitlines():
        assert line in unit, f"{line!r} is not in deploy/spades.service"
