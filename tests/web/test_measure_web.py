"""scripts/measure_web.py runs and prints its figures (quick settings, no Lighthouse)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.server import ROOT


def test_measure_web_prints_its_figures(web_dist: Path, browser: Any) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "measure_web.py"), "--runs=1", "--no-lighthouse"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "calibration:" in out
    assert "play page JavaScript:" in out and "KB gzipped" in out
    assert "first load to interactive lobby, cold cache: median" in out
