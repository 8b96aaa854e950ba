"""Release: solutions/ → chapters/ with nbgrader, then refuse if any answer or hidden test leaked.

nbgrader strips the solution and hidden-test regions. The leak check is a second, independent
line of defence: it looks for the markers and for every secret line (``torchcourse.contract``'s
one rule) of every solution region and hidden block of solutions/ in the released notebooks.

Each translated release (``<language>/chapters/``, e.g. zh_CN/chapters/) is then built from chapters/ and the
catalogs by ``python -m torchcourse.translation build``, for the chapters its released-chapters.txt lists, and
checked the same way; it must also be the same assignment as the English release: the same cells, ids and
nbgrader metadata, and the same code, so that either language is graded by the same checks.
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
from torchcourse.translation.catalogs import LANGUAGES


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


def _markdown_lines(path: Path) -> set[str]:
    nb = json.loads(path.read_text(encoding="utf-8"))
    return {line.strip() for c in nb["cells"] if c["cell_type"] == "markdown"
            for line in cell_source(c).splitlines()}


def find_text_leaks(solution_dir: Path, release_dir: Path, translated_dir: Path) -> list[str]:
    """Secret lines in a translated release's markdown: a translator's text, not the author's, so it is checked
    like code (a line the English release shows anyway is no secret)."""
    problems = []
    for sol in sorted(solution_dir.glob("*.ipynb")):
        translated, english = translated_dir / sol.name, release_dir / sol.name
        if not translated.exists() or not english.exists():
            continue  # find_leaks and find_drift say so
        shown = _public_lines(english) | _markdown_lines(english)
        for secret in sorted((secret_lines(_code_cells(sol)) - shown) & _markdown_lines(translated)):
            problems.append(f"{translated}: its text contains solution or hidden-test line {secret!r}")
    return problems


def find_drift(release_dir: Path, translated_dir: Path) -> list[str]:
    """Problems that would make a translated release another assignment than the English one: a notebook
    missing or extra, or a cell whose type, id, nbgrader metadata or (for code) source differs."""
    problems = []
    english = {p.name for p in release_dir.glob("*.ipynb")}
    translated = {p.name for p in translated_dir.glob("*.ipynb")}
    problems += [f"{translated_dir / n}: not in the English release" for n in sorted(translated - english)]
    for name in sorted(english & translated):
        a = json.loads((release_dir / name).read_text(encoding="utf-8"))["cells"]
        b = json.loads((translated_dir / name).read_text(encoding="utf-8"))["cells"]
        if len(a) != len(b):
            problems.append(f"{translated_dir / name}: {len(b)} cells, the English release has {len(a)}")
            continue
        for k, (x, y) in enumerate(zip(a, b), 1):
            same = (x["cell_type"] == y["cell_type"] and x.get("id") == y.get("id")
                    and x.get("metadata", {}).get("nbgrader") == y.get("metadata", {}).get("nbgrader")
                    and (x["cell_type"] != "code" or cell_source(x) == cell_source(y)))
            if not same:
                problems.append(f"{translated_dir / name}: cell {k} is not the English release's "
                                "(type, id, nbgrader metadata or code differ)")
    return problems


def released_languages(root: Path) -> dict[str, list[str]]:
    """language -> the chapters its released-chapters.txt lists, for each language the course has a list of."""
    from torchcourse.translation.__main__ import released_chapters

    return {lang: released_chapters(root, lang) for lang in LANGUAGES
            if (root / "locale" / lang / "released-chapters.txt").exists()}


def release_translations(course: Course, chapters: list[str] | None = None) -> dict[str, list[str]]:
    """Build each translated release of `chapters` (None: the whole of each, which also removes a chapter no
    longer listed) from chapters/, and check it; returns language -> the chapters written."""
    written = {}
    for lang, listed in released_languages(course.root).items():
        todo = listed if chapters is None else [c for c in chapters if c in listed]
        if not todo and chapters is not None:
            continue
        cmd = [sys.executable, "-m", "torchcourse.translation", "build", *([] if chapters is None else todo),
               "--language", lang, "--root", str(course.root)]
        done = subprocess.run(cmd, cwd=course.root, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"the {lang} release could not be built:\n{done.stdout}{done.stderr}")
        problems = []
        for chapter in todo:
            translated = course.root / lang / "chapters" / chapter
            problems += find_leaks(course.solutions / chapter, translated)
            problems += find_text_leaks(course.solutions / chapter, course.chapters / chapter, translated)
            problems += find_drift(course.chapters / chapter, translated)
        if problems:
            raise LeakError(f"Refusing to release {lang}; these would reach learners or grade differently:\n  "
                            + "\n  ".join(problems))
        written[lang] = todo
    return written


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
    """Release each chapter of `course` with nbgrader and check it, then its translated releases
    (`release_translations`); returns the chapters released."""
    whole = not chapters
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
    release_translations(course, None if whole else chapters)
    return chapters
