"""collect: submissions into submitted/<student>/<chapter>/, from nbgrader's exchange or an LMS download.

A learning-management system hands out a folder or zip of notebooks whose names carry the
student (``smithjane_1234_5678_01-what-is-a-tensor-1.ipynb``), or one folder per student.
Each notebook is mapped to a student id and to one of the chapter's notebooks by name;
ids and file names are sanitised, links and archive tricks refused, nothing is executed.
"""

from __future__ import annotations

import re
import shutil
import stat
import tempfile
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from grader.course import Course

MAX_FILE = 256 * 2**20
MAX_TOTAL = 4 * 2**30


def safe_id(raw: str) -> str:
    """A student id that is safe as a folder name and in the gradebook."""
    text = re.sub(r"[^A-Za-z0-9._-]+", "_", raw.strip()).strip("._-").lower()[:64]
    return text or "student"


def from_exchange(course: Course, chapter: str) -> list[str]:
    """nbgrader's own collect from the exchange (Exchange.root, env TORCHCOURSE_EXCHANGE)."""
    from nbgrader.apps import NbGraderAPI

    cfg = course.config()
    cfg.Application.log_level = 40
    api = NbGraderAPI(config=cfg)
    done = api.collect(chapter, update=True)
    if not done.get("success"):
        raise RuntimeError(f"nbgrader could not collect {chapter}:\n{done.get('log', '')}{done.get('error', '')}")
    return course.students(chapter)


def _extract(zip_path: Path, dest: Path) -> None:
    total = 0
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            mode = info.external_attr >> 16
            if info.is_dir() or stat.S_ISLNK(mode):
                continue
            parts = [p for p in Path(info.filename.replace("\\", "/")).parts if p not in ("", ".", "/")]
            if not parts or ".." in parts or info.filename.startswith("/"):
                continue
            if info.file_size > MAX_FILE or total + info.file_size > MAX_TOTAL:
                raise ValueError(f"{zip_path.name}: {info.filename} is too large")
            total += info.file_size
            target = dest.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out, 1 << 20)


def _match(name: str, notebooks: list[str]) -> str | None:
    """The chapter notebook a downloaded file is a copy of: the longest notebook name inside the file name."""
    lower = name.lower()
    hits = [nb for nb in notebooks if nb.lower() in lower]
    return max(hits, key=len) if hits else None


def from_folder(course: Course, chapter: str, source: Path) -> dict[str, str]:
    """Copy an LMS download (folder or zip) into submitted/; returns {original name: student id}."""
    notebooks = course.notebooks(chapter)
    with tempfile.TemporaryDirectory(prefix="torchcourse-collect-") as tmp:
        root = Path(source)
        if zipfile.is_zipfile(root):
            _extract(root, Path(tmp))
            root = Path(tmp)
        if not root.is_dir():
            raise ValueError(f"{source} is neither a folder nor a zip file")
        ids: dict[str, str] = {}
        taken: dict[str, str] = {}
        for path in sorted(root.rglob("*.ipynb")):
            if path.is_symlink() or not path.is_file() or ".ipynb_checkpoints" in path.parts:
                continue
            rel = path.relative_to(root)
            raw = rel.parts[0] if len(rel.parts) > 1 else path.name.split("_")[0]
            nb = _match(path.name, notebooks)
            if nb is None:
                print(f"collect: skipped {rel}: not one of {', '.join(notebooks)}")
                continue
            sid = ids.get(raw)
            if sid is None:
                sid = safe_id(raw)
                base, k = sid, 2
                while sid in taken and taken[sid] != raw:  # two people, one sanitised id: keep them apart
                    sid, k = f"{base}-{k}", k + 1
                ids[raw], taken[sid] = sid, raw
            out = course.submitted / sid / chapter
            out.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, out / f"{nb}.ipynb", follow_symlinks=False)
            when = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            (out / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    return ids
