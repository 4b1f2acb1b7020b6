"""The third-party clients of tests/clients (Node: graphql-http, Apollo Client,
subscriptions-transport-ws) and Chromium. Missing tools fail the tests in CI and skip
them elsewhere (see tests/support/services.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

CLIENTS = Path(__file__).resolve().parents[1] / "clients"
CHROMIUM = os.environ.get("SPADES_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def missing(message: str) -> None:
    """Skip on a developer machine; fail in CI."""
    if os.environ.get("CI"):
        pytest.fail(message + " (required in CI)")
    pytest.skip(message)


def node_clients() -> Path:
    """tests/clients with its pinned packages installed (`npm ci` when the lock changed)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing("Node.js and npm are needed for the client tests")
    lock = (CLIENTS / "package-lock.json").read_bytes()
    stamp = CLIENTS / "node_modules" / ".lock-sha256"
    digest = hashlib.sha256(lock).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        subprocess.run(
            ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=CLIENTS,
            check=True,
            timeout=600,
        )
        stamp.write_text(digest)
    return CLIENTS


def run_node(script: str, *args: str, timeout: float = 120) -> dict[str, Any]:
    """Run a script of tests/clients; its last output line is a JSON summary."""
    folder = node_clients()
    done = subprocess.run(
        ["node", script, *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert lines, f"{script} printed nothing:\n{done.stderr[-3000:]}"
    return dict(json.loads(lines[-1]))


def chromium_path() -> str:
    """The Chromium binary, and the playwright package to drive it."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        missing("the playwright package is needed for the browser tests")
    if not Path(CHROMIUM).exists():
        missing(f"Chromium is needed at {CHROMIUM} for the browser tests")
    return CHROMIUM
