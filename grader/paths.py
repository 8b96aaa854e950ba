"""Where things live in the course repository: one place for every path the grader uses."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
CHAPTERS = ROOT / "chapters"
CHAPTER_IDS = ("01-tensors", "02-autograd", "03-parallel", "04-hardware")

