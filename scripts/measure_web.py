"""Measure the web client's goals in Chromium and print the figures.

- JavaScript the play page loads, gzipped (goal: at most 150 KB);
- first load to an interactive lobby (goal: under 1 s), cold and warm cache;
- Lighthouse accessibility score of the sign-in page, the lobby and a table mid-hand
  (goal: at least 95). Lighthouse 12 (npm; 13 needs Node 22) is installed on demand into
  web/.tools and runs Debian's Chromium (CHROME_PATH); if it cannot run, axe-core is
  run through Playwright instead, and the output says so.

Usage: .venv/bin/python scripts/measure_web.py [--runs 7] [--no-lighthouse]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from _measure import calibration  # noqa: E402

from tests.support.server import LiveServer  # noqa: E402
from tests.web.conftest import CHROMIUM, CHROMIUM_ARGS  # noqa: E402

DIST = ROOT / "web" / "dist"
TOOLS = ROOT / "web" / ".tools"
LIGHTHOUSE_VERSION = "12.8.2"
AXE_VERSION = "4.10.3"


def js_sizes() -> tuple[int, int, list[tuple[str, int, int]]]:
    """(raw, gzipped) bytes of the JavaScript index.html loads, and per file."""
    index = (DIST / "index.html").read_text()
    names = re.findall(r'(?:src|href)="/(assets/[^"]+\.js)"', index)
    files = []
    for name in names:
        data = (DIST / name).read_bytes()
        files.append((name, len(data), len(gzip.compress(data, compresslevel=9))))
    return sum(f[1] for f in files), sum(f[2] for f in files), files


def gql(url: str, query: str, variables: dict[str, Any], token: str | None = None) -> Any:
    headers = {"authorization": f"Bearer {token}"} if token else {}
    body = httpx.post(url, json={"query": query, "variables": variables}, headers=headers).json()
    if body.get("errors"):
        raise RuntimeError(body["errors"])
    return body["data"]


def seed_player(server: LiveServer) -> tuple[str, str]:
    """A player with a table against three bots, a few cards into the first hand; the
    script that signs a browser in as them, and the table id. Other tables fill the lobby."""
    url = server.http_url
    sign_up = "mutation($u:String!,$p:String!){signUp(username:$u,password:$p){token}}"
    token = gql(url, sign_up, {"u": "measure", "p": "measure-password"})["signUp"]["token"]
    me = gql(url, "{ me { id username } }", {}, token)["me"]
    create = "mutation($i:CreateTableInput!){createTable(input:$i){id}}"
    for n in range(5):
        gql(url, create, {"i": {"name": f"Open table {n}"}}, token)
    table = gql(url, create, {"i": {"name": "Measured table", "seed": 3}}, token)["createTable"]
    tid = table["id"]
    for seat in ("EAST", "SOUTH", "WEST"):
        gql(url, "mutation($t:ID!,$s:Seat!){addBot(tableId:$t,seat:$s){id}}",
            {"t": tid, "s": seat}, token)  # fmt: skip
    view = "{ phase turn viewerSeat legalPlays { suit rank } }"
    for _ in range(4):
        game = gql(url, f"query($t:ID!){{game(tableId:$t){view}}}", {"t": tid}, token)["game"]
        if game["phase"] == "BIDDING":
            gql(url, "mutation($t:ID!){placeBid(tableId:$t,bid:{kind:TRICKS,tricks:3}){version}}",
                {"t": tid}, token)  # fmt: skip
        elif game["legalPlays"]:
            gql(url, "mutation($t:ID!,$c:CardInput!){playCard(tableId:$t,card:$c){version}}",
                {"t": tid, "c": game["legalPlays"][0]}, token)  # fmt: skip
    return remembered(token, me), tid


def remembered(token: str, player: dict[str, str]) -> str:
    """The script a returning player's browser runs: its stored token and player."""
    return (
        f"localStorage.setItem('spades.token', {json.dumps(token)});"
        f"localStorage.setItem('spades.player', {json.dumps(json.dumps(player))});"
    )


def load_times(base: str, session: str, runs: int) -> tuple[list[float], list[float]]:
    """Milliseconds from navigation start to the lobby's `lobby-interactive` mark, for a
    returning player (`session`: the script that stores their session)."""
    from playwright.sync_api import sync_playwright

    script = session
    ready = "performance.getEntriesByName('lobby-interactive')[0].startTime"
    cold: list[float] = []
    warm: list[float] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for _ in range(runs):
            context = browser.new_context()
            context.add_init_script(script)
            page = context.new_page()
            page.goto(f"{base}/")
            page.locator("[data-ready=lobby]").wait_for()
            cold.append(float(page.evaluate(ready)))
            page.reload()
            page.locator("[data-ready=lobby]").wait_for()
            warm.append(float(page.evaluate(ready)))
            context.close()
        browser.close()
    return cold, warm


def npm_tool(package: str, version: str) -> Path:
    """Install an npm package into web/.tools once (not part of the client's lockfile)."""
    target = TOOLS / "node_modules" / package
    manifest = target / "package.json"
    if not manifest.exists() or json.loads(manifest.read_text())["version"] != version:
        TOOLS.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "install", "--prefix", str(TOOLS), "--no-audit", "--no-fund",
             "--loglevel=error", f"{package}@{version}"],
            check=True,
        )  # fmt: skip
    return target


def signed_in_profile(base: str, session: str) -> Path:
    """A Chromium profile whose local storage holds the token (Lighthouse then audits the
    signed-in pages; it runs with --disable-storage-reset)."""
    from playwright.sync_api import sync_playwright

    profile = Path(tempfile.mkdtemp(prefix="spades-lh-"))
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(profile), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS
        )
        page = context.new_page()
        page.goto(f"{base}/")
        page.evaluate(session)
        page.reload()
        page.locator("[data-ready=lobby]").wait_for()
        context.close()
    return profile


def lighthouse(url: str, profile: Path | None) -> tuple[float, list[str]]:
    """Lighthouse's accessibility score (0-100) of one page, and the audits it failed."""
    package = npm_tool("lighthouse", LIGHTHOUSE_VERSION)
    flags = " ".join(CHROMIUM_ARGS) + (f" --user-data-dir={profile}" if profile else "")
    out = subprocess.run(
        ["node", str(package / "cli" / "index.js"), url, "--only-categories=accessibility",
         "--output=json", "--quiet", f"--chrome-flags={flags}", "--disable-storage-reset",
         "--max-wait-for-load=15000"],
        capture_output=True, text=True, check=False,
        env={**os.environ, "CHROME_PATH": str(CHROMIUM)},
    )  # fmt: skip
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    report = json.loads(out.stdout)
    failed = [
        audit_id
        for audit_id, audit in report["audits"].items()
        if audit.get("score") == 0 and audit.get("scoreDisplayMode") == "binary"
    ]
    return float(report["categories"]["accessibility"]["score"]) * 100, failed


def axe(base: str, session: str, paths: list[str]) -> dict[str, list[str]]:
    """axe-core violations (rule ids) per page, run in Chromium by Playwright."""
    from playwright.sync_api import sync_playwright

    source = (npm_tool("axe-core", AXE_VERSION) / "axe.min.js").read_text()
    found: dict[str, list[str]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        for path in paths:
            context = browser.new_context()
            if path != "/signin":
                context.add_init_script(session)
            page = context.new_page()
            page.goto(f"{base}{'/' if path == '/signin' else path}")
            page.wait_for_load_state("networkidle")
            page.add_script_tag(content=source)  # CDP-injected: not subject to the page's CSP
            result = page.evaluate("axe.run().then(r => r.violations.map(v => v.id))")
            found[path] = list(result)
            context.close()
        browser.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-lighthouse", action="store_true")
    args = parser.parse_args()

    print(f"calibration: python3 -m timeit 'sum(range(10000))': {calibration()}")
    subprocess.run(["bash", str(ROOT / "scripts" / "build_web")], check=True)
    raw, zipped, files = js_sizes()
    for name, size, packed in files:
        print(f"  {name}: {size / 1024:.1f} KB raw, {packed / 1024:.1f} KB gzipped")
    print(f"play page JavaScript: {raw / 1024:.1f} KB raw, {zipped / 1024:.1f} KB gzipped "
          f"(goal <= 150 KB gzipped)")  # fmt: skip

    workdir = Path(tempfile.mkdtemp(prefix="spades-measure-"))
    server = LiveServer(workdir / "spades.db", env={"SPADES_WEB_DIST": str(DIST)})
    server.start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        session, table_id = seed_player(server)
        cold, warm = load_times(base, session, args.runs)
        for label, times in (("cold cache", cold), ("warm cache", warm)):
            median = statistics.median(times)
            print(
                f"first load to interactive lobby, {label}: median {median:.0f} ms"
                f" (min {min(times):.0f}, max {max(times):.0f}, {len(times)} runs; goal < 1000 ms)"
            )
        pages = {"sign-in": "/signin", "lobby": "/", "table mid-hand": f"/table/{table_id}"}
        if args.no_lighthouse:
            return
        try:
            profile = signed_in_profile(base, session)
            try:
                for label, path in pages.items():
                    url = f"{base}{'/' if path == '/signin' else path}"
                    score, failed = lighthouse(url, None if path == "/signin" else profile)
                    print(
                        f"Lighthouse {LIGHTHOUSE_VERSION} accessibility, {label}: {score:.0f}"
                        f" (goal >= 95){'; failed: ' + ', '.join(failed) if failed else ''}"
                    )
            finally:
                shutil.rmtree(profile, ignore_errors=True)
        except (RuntimeError, subprocess.CalledProcessError, OSError) as exc:
            print(f"Lighthouse could not run here ({str(exc).strip()[:300]}); axe-core instead:")
            for path, violations in axe(base, session, list(pages.values())).items():
                print(f"  axe-core {AXE_VERSION} {path}: {len(violations)} violations {violations}")
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
