"""Test-suite set-up: the notebook helpers and the repository root importable from every test."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "tests" / "notebooks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
