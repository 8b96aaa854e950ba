"""A course folder as the grader sees it: where each stage reads and writes, and nbgrader's config for it.

The repository is one course; tests and benchmarks grade throw-away copies, so every
stage takes a `Course` rather than assuming the repository root.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config

from torchcourse.contract import chapters

ROOT = Path(__file__).resolve().parent.parent  # the repository: the course this checkout holds
COURSE_ID = "torchcourse"
# Student ids and file names that reach the filesystem: letters, digits, dot, dash, underscore.
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def safe_id(raw: str) -> str:
    """A student id made from a name a person or an LMS gave: safe as a folder name and in the gradebook (it
    matches `SAFE_ID`), lower case so that ids compared ignoring case are one."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", raw.strip()).strip("._-").lower()[:64]
    return text or "student"


LIBRARY_MODULE = re.compile(r"torchcourse(?:\.\w+)*")  # a module name of the course library
LIBRARY_IMPORT = re.compile(rf"\b(?:from|import)\s+({LIBRARY_MODULE.pattern})")


@dataclass(frozen=True)
class Course:
    root: Path = ROOT

    @property
    def solutions(self) -> Path:
        return self.root / "solutions"

    @property
    def chapters(self) -> Path:
        return self.root / "chapters"

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def autograded(self) -> Path:
        return self.root / "autograded"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    @property
    def reports(self) -> Path:
        return self.root / "reports"

    @property
    def db_path(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def sources_stamp(self) -> Path:
        """Beside the gradebook: the solutions the gradebook's cells were saved from (gradebook.ensure_assignment)."""
        return self.db_path.with_name(".gradebook-sources.json")

    @property
    def db_url(self) -> str:
        return "sqlite:///" + str(self.db_path)

    def assignments(self) -> list[str]:
        """Chapters with solution notebooks, in order (``contract.chapters``)."""
        return chapters(self.solutions)

    def notebooks(self, chapter: str) -> list[str]:
        """Notebook names (without .ipynb) of a chapter, from solutions/."""
        return sorted(p.stem for p in (self.solutions / chapter).glob("*.ipynb"))

    def library_modules(self, chapter: str) -> tuple[str, ...]:
        """The course library's modules the chapter's notebooks import (read from the notebook files as text:
        an import statement's words survive JSON as they are), and the checks' own module, always."""
        found = {"torchcourse.grading"}
        for p in (self.solutions / chapter).glob("*.ipynb"):
            try:
                found.update(LIBRARY_IMPORT.findall(p.read_text(encoding="utf-8", errors="replace")))
            except OSError:
                continue
        return tuple(sorted(found))

    def students(self, chapter: str) -> list[str]:
        """Students with a submission of `chapter`: real folders only (collect never makes a link; one would
        grade whatever it points at, another student's work too, under this name)."""
        base = self.submitted
        if not base.is_dir():
            return []
        return sorted(p.name for p in base.iterdir() if SAFE_ID.match(p.name) and not p.is_symlink()
                      and (p / chapter).is_dir() and not (p / chapter).is_symlink())

    def unusable(self, chapter: str) -> dict[str, str]:
        """Entries of submitted/ that look like a submission of `chapter` but cannot be graded, with why: not
        skipped in silence, so that `autograde` names each one as not recorded."""
        base, found = self.submitted, {}
        if not base.is_dir():
            return found
        for p in sorted(base.iterdir()):
            sub = p / chapter
            if p.name.startswith("."):
                continue  # hidden entries (.DS_Store, an editor's) are nobody's submission
            if p.is_symlink():
                found[p.name] = f"submitted/{p.name} is a symbolic link, not a folder; not graded"
            elif not p.is_dir():
                found[p.name] = f"submitted/{p.name} is not a folder; not graded"
            elif not os.path.lexists(sub):
                continue  # no submission of this chapter
            elif not SAFE_ID.match(p.name):
                found[p.name] = (f"submitted/{p.name} is not a student id (letters, digits, '.', '_', '-', "
                                 "at most 64); not graded")
            elif sub.is_symlink():
                found[p.name] = f"submitted/{p.name}/{chapter} is a symbolic link, not a folder; not graded"
            elif not sub.is_dir():
                found[p.name] = f"submitted/{p.name}/{chapter} is not a folder; not graded"
        return found

    def config(self) -> Config:
        """nbgrader configuration equivalent to grader/nbgrader_config.py, for this folder."""
        c = Config()
        c.CourseDirectory.course_id = COURSE_ID
        c.CourseDirectory.root = str(self.root)
        c.CourseDirectory.source_directory = "solutions"
        c.CourseDirectory.release_directory = "chapters"
        c.CourseDirectory.notebook_id = "*"
        c.CourseDirectory.db_url = self.db_url
        c.Exchange.root = os.environ.get("TORCHCOURSE_EXCHANGE", "/srv/nbgrader/exchange")
        return c
