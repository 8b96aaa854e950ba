"""The code stays ruff clean (the conventions in pyproject.toml), checked by the real linter."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_ruff_finds_nothing():
    ruff = Path(sys.executable).with_name("ruff")
    done = subprocess.run([str(ruff), "check", "--output-format", "concise", "src", "grader", "tests", "benchmarks",
                           "requirements", "book"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
