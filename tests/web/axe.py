"""axe-core, the accessibility engine, run inside a page of the browser tests.

Its source is web/'s own devDependency (package-lock.json pins it). It is evaluated in the
page through the DevTools protocol, as Playwright's own scripts are: the page's
Content-Security-Policy stays as the server sends it, and no script is added to the DOM.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from tests.support.server import ROOT

AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"
# The impacts a page must not have (axe's scale: minor, moderate, serious, critical).
BLOCKING = ("serious", "critical")

RUN = """async () => {
  const result = await axe.run(document, { resultTypes: ['violations'] });
  return result.violations.map((v) => ({
    id: v.id,
    impact: v.impact,
    help: v.help,
    nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')),
  }));
}"""


@cache
def axe_source() -> str:
    """axe-core's browser build (web/ installs it: npm ci)."""
    assert AXE.is_file(), f"{AXE} is missing: run `npm ci` in web/"
    return AXE.read_text()


def violations(page: Any) -> list[dict[str, Any]]:
    """axe's serious and critical violations on `page` as it is now."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        # A string that is not a function is evaluated as a script (a statement list).
        page.evaluate(f"{axe_source()}\n;undefined")
    found: list[dict[str, Any]] = page.evaluate(RUN)
    return [v for v in found if v["impact"] in BLOCKING]


def assert_accessible(page: Any, where: str) -> None:
    """Fail with axe's findings if `page` has a serious or critical violation."""
    found = violations(page)
    assert not found, f"axe on {where}: " + "; ".join(
        f"{v['impact']} {v['id']} ({v['help']}): {v['nodes']}" for v in found
    )
