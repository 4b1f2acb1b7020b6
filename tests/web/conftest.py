"""Browser tests of the web client: Debian's Chromium driven by Playwright, against a
real server (uvicorn subprocess, SQLite file) serving the built client at `/`.

Node (to build the client) and Chromium must be there: in CI (env CI) their absence
fails these tests; on a developer machine it skips them with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.server import ROOT, LiveServer

CHROMIUM = Path(os.environ.get("SPADES_CHROMIUM", "/usr/bin/chromium"))
ARTIFACTS = ROOT / "test-artifacts"
DIST = ROOT / "web" / "dist"
# Flags for a quiet, deterministic headless Chromium that calls no Google service.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def missing(what: str) -> None:
    """Fail in CI, skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} (required in CI)")
    pytest.skip(what)


def build_client() -> Path:
    """Build web/dist if missing or stale (scripts/build_web); its directory."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        missing("Node.js 20+ and npm are needed to build the web client")
    result = subprocess.run(
        ["bash", str(ROOT / "scripts" / "build_web")], capture_output=True, text=True, check=False
    )
    if result.returncode == 3:
        missing(result.stderr.strip())
    assert result.returncode == 0, f"building the web client failed:\n{result.stderr[-3000:]}"
    assert (DIST / "index.html").is_file()
    return DIST


@pytest.fixture(scope="session")
def web_dist() -> Path:
    """The built client."""
    return build_client()


@pytest.fixture(scope="module")
def browser(web_dist: Path) -> Iterator[Any]:
    """A headless Chromium per test module. (Playwright's sync API keeps an event loop
    running in this thread while it is started: a session-wide one would break every
    asyncio test that pytest runs after it.)"""
    if not CHROMIUM.exists():
        missing(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def web_server(tmp_path_factory: pytest.TempPathFactory, web_dist: Path) -> Iterator[LiveServer]:
    """A server with the client at `/` and bots that answer at once."""
    live = LiveServer(
        tmp_path_factory.mktemp("web") / "spades.db",
        env={"SPADES_BOT_DELAY_MS": "0", "SPADES_WEB_DIST": str(web_dist)},
    )
    live.start()
    yield live
    live.stop()


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the test item (for the failure screenshots)."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


@pytest.fixture(autouse=True)
def close_pages(request: pytest.FixtureRequest) -> Iterator[None]:
    """After each test: a screenshot of every page if it failed, then close them all; a
    Content-Security-Policy violation in any page's console fails the test."""
    from tests.web import pages

    pages.OPEN.clear()
    yield
    report = getattr(request.node, "report_call", None)
    violations = [text for player in pages.OPEN for text in player.csp_reports]
    for number, player in enumerate(pages.OPEN):
        try:
            if report is not None and report.failed:
                ARTIFACTS.mkdir(exist_ok=True)
                name = f"failed-{request.node.name}-{number}.png"
                player.page.screenshot(path=str(ARTIFACTS / name), full_page=True)
            player.page.context.close()
        except Exception:  # already closed by the test
            continue
    pages.OPEN.clear()
    if violations:
        pytest.fail(f"the page broke its Content-Security-Policy: {violations}")


@pytest.fixture
def artifacts() -> Path:
    """Where screenshots go (gitignored; CI keeps them)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
