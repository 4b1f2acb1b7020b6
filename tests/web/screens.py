"""Where things are on the screen (bounding boxes, in CSS pixels of the viewport), and the
screenshots the documentation shows.

`SPADES_SCREENSHOTS=1` makes the tests that pass through a documented moment write its
picture under docs/screenshots/ (PNG); without it they write nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tests.support.server import ROOT

SCREENSHOTS = ROOT / "docs" / "screenshots"
DESKTOP = {"viewport": {"width": 1366, "height": 900}}
PHONE = {"viewport": {"width": 390, "height": 844}, "is_mobile": True, "has_touch": True}
DEVICES = {"desktop": DESKTOP, "phone": PHONE}


@dataclass(frozen=True)
class Box:
    """A rectangle of the viewport."""

    x: float
    y: float
    width: float
    height: float

    @property
    def centre(self) -> tuple[float, float]:
        return self.x + self.width / 2, self.y + self.height / 2

    @property
    def bottom(self) -> float:
        return self.y + self.height

    @property
    def right(self) -> float:
        return self.x + self.width

    def contains(self, point: tuple[float, float]) -> bool:
        x, y = point
        return self.x <= x <= self.right and self.y <= y <= self.bottom


def box(locator: Any) -> Box:
    """The bounding box of the one element `locator` names (it must be rendered)."""
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return Box(found["x"], found["y"], found["width"], found["height"])


def viewport(page: Any) -> Box:
    size = page.viewport_size
    return Box(0, 0, size["width"], size["height"])


def assert_in_view(page: Any, selector: str, what: str) -> list[Box]:
    """Every element `selector` names lies wholly inside the viewport as it is scrolled
    now (at least one must exist); their boxes."""
    screen = viewport(page)
    boxes = [box(item) for item in page.locator(selector).all()]
    assert boxes, f"no {what} on the page"
    for found in boxes:
        inside = (
            found.x >= -0.5
            and found.y >= -0.5
            and found.right <= screen.right + 0.5
            and found.bottom <= screen.bottom + 0.5
        )
        assert inside, f"{what} at {found} is not inside the {screen.width}x{screen.height} window"
    return boxes


def no_sideways_scroll(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport(page).width, f"the page scrolls sideways ({width} px)"


def shoot(page: Any, name: str) -> None:
    """The documentation's screenshot `name`.png, when SPADES_SCREENSHOTS is set."""
    if not os.environ.get("SPADES_SCREENSHOTS"):
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), animations="disabled")
