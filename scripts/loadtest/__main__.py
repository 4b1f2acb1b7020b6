"""`python scripts/loadtest [SCENARIO] [flags]`: see loadtest/__init__.py."""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    # Run as a directory: make `loadtest` importable as a package.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loadtest.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
