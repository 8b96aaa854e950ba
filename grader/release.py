"""Release: solutions/ → chapters/ with nbgrader, then refuse if any answer or hidden test leaked.

nbgrader strips the solution and hidden-test regions. The leak check is a second, independent
line of defence: it looks for the markers and for every secret line (``torchcourse.contract``'s
one rule) of every solution region and hidden block of solutions/ in the released notebooks.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

from grader.course import Course
from torchcourse.contract import MARKERS, cell_source, secret_lines


class LeakError(RuntimeError):
    """A solution or hidden test would reach learners."""


def _code_cells(path: Path) -> list[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return [cell_source(c) for c in nb["cells"] if c["cell_type"] == "code"]


def _public_lines(path: Path) -> set[str]:
    return {line.strip() for source in _code_cells(path) for line in source.splitlines()}


def find_leaks(solution_dir: Path, release_dir: Path) -> list[str]:
    """Problems found: released files that carry a marker or a secret line."""
    problems = []
    for sol in sorted(solution_dir.glob("*.ipynb")):
        rel = release_dir / sol.name
        if not rel.exists():
            problems.append(f"{rel}: not released")
            continue
        text = rel.read_text(encoding="utf-8")
        problems += [f"{rel}: contains the marker {m!r}" for m in MARKERS if m in text]
        public = _public_lines(rel)
        for secret in sorted(secret_lines(_code_cells(sol))):
            if secret in public:
                problems.append(f"{rel}: contains solution or hidden-test line {secret!r}")
    return problems


def _all_secrets(root: Path) -> set[str]:
    """Secret lines of every solution notebook that no released notebook shows anyway."""
    found: set[str] = set()
    for sol in sorted((root / "solutions").glob("*/*.ipynb")):
        found |= secret_lines(_code_cells(sol))
    public: set[str] = set()
    for rel in sorted((root / "chapters").glob("*/*.ipynb")):
        public |= _public_lines(rel)
    return found - public


TOC_ENTRY = re.compile(r"^\s*-?\s*(file|glob|root|url)\s*:\s*['\"]?([^'\"#\s]+)")


def find_site_leaks(root: Path) -> list[str]:
    """Problems in what the site publishes: a table of contents entry inside solutions/, or secret lines
    in book/ pages or an already built site (_build/html)."""
    problems = []
    toc = root / "_toc.yml"
    if toc.exists():
        for n, line in enumerate(toc.read_text(encoding="utf-8").splitlines(), 1):
            m = TOC_ENTRY.match(line)
            if m and m.group(2).lstrip("./").startswith("solutions/"):
                problems.append(f"_toc.yml:{n}: the site would publish {m.group(2)!r}")
    secrets = _all_secrets(root)
    # Pages a reader sees; the site's own build code (book/_ext/*.py) may name the markers it strips.
    pages = [p for p in (root / "book").rglob("*") if p.suffix in (".md", ".ipynb", ".html", ".txt")]
    pages += list((root / "_build" / "html").rglob("*.html"))
    for page in pages:
        text = page.read_text(encoding="utf-8", errors="replace")
        if page.suffix == ".html":
            text = html.unescape(re.sub(r"<[^>]+>", "", text))
        problems += [f"{page.relative_to(root)}: contains the marker {m!r}" for m in MARKERS if m in text]
        lines = {ln.strip() for ln in text.splitlines()}
        problems += [f"{page.relative_to(root)}: contains solution or hidden-test line {s!r}"
                     for s in sorted(secrets & lines)]
    return problems


def release(course: Course, chapters: list[str] | None = None) -> list[str]:
    """Release each chapter of `course` with nbgrader and check it; returns the chapters released."""
    chapters = chapters or course.assignments()
    for chapter in chapters:
        cmd = [sys.executable, "-m", "nbgrader", "generate_assignment", chapter, "--force", "--no-db",
               "--log-level=WARN"]
        done = subprocess.run(cmd, cwd=course.root, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"nbgrader could not release {chapter}:\n{done.stdout}{done.stderr}")
        leaks = find_leaks(course.solutions / chapter, course.chapters / chapter)
        if leaks:
            raise LeakError("Refusing to release; these would reach learners:\n  " + "\n  ".join(leaks))
    leaks = find_site_leaks(course.root)
    if leaks:
        raise LeakError("Refusing to release; these would reach the site:\n  " + "\n  ".join(leaks))
    return chapters
