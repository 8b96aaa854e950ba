"""Where things live in the course repository: one place for every path the grader uses."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

