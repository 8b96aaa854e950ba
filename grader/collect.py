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
from dataclasses import dataclass, field
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


@dataclass
class Collected:
    """What `from_folder` did: {original name: student id}, and every entry it refused, with why."""

    ids: dict[str, str] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)


def _extract(zip_path: Path, dest: Path) -> list[tuple[str, str]]:
    """Unpack the plain files of a zip under `dest`; returns the entries refused, with why."""
    refused: list[tuple[str, str]] = []
    total = 0
    with zipfile.ZipFile(zip_path) as zf:
        for info in zf.infolist():
            name = info.filename
            mode = info.external_attr >> 16
            if info.is_dir():
                continue
            if stat.S_ISLNK(mode):
                refused.append((name, "a symbolic link in the archive"))
                continue
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # type bits, when the archive has them
                refused.append((name, "not a regular file"))
                continue
            parts = [p for p in Path(name.replace("\\", "/")).parts if p not in ("", ".", "/")]
            if name.replace("\\", "/").startswith("/") or ".." in parts:
                refused.append((name, "its path leaves the archive (absolute, or with '..')"))
                continue
            if not parts:
                refused.append((name, "an empty name"))
                continue
            if info.file_size > MAX_FILE:
                refused.append((name, f"{info.file_size / 2**20:.0f} MiB, over the {MAX_FILE // 2**20} MiB limit"))
                continue
            if total + info.file_size > MAX_TOTAL:
                raise ValueError(f"{zip_path.name} unpacks to more than {MAX_TOTAL // 2**30} GiB; refused")
            total += info.file_size
            target = dest.joinpath(*parts)
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                with zf.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out, 1 << 20)
            except (zipfile.BadZipFile, RuntimeError, NotImplementedError, OSError, EOFError) as exc:
                if target.is_file() and not target.is_symlink():
                    target.unlink()  # nothing half-written is collected
                refused.append((name, f"could not be unpacked ({type(exc).__name__}: {str(exc)[:120]})"))
    return refused


def _match(name: str, notebooks: list[str]) -> str | None:
    """The chapter notebook a downloaded file is a copy of: the longest notebook name inside the file name."""
    lower = name.lower()
    hits = [nb for nb in notebooks if nb.lower() in lower]
    return max(hits, key=len) if hits else None


def from_folder(course: Course, chapter: str, source: Path) -> Collected:
    """Copy an LMS download (folder or zip) into submitted/; returns the ids given and the entries refused."""
    notebooks = course.notebooks(chapter)
    done = Collected()
    with tempfile.TemporaryDirectory(prefix="torchcourse-collect-") as tmp:
        root = Path(source)
        if zipfile.is_zipfile(root):
            done.refused += _extract(root, Path(tmp))
            root = Path(tmp)
        if not root.is_dir():
            raise ValueError(f"{source} is neither a folder nor a zip file")
        taken: dict[str, str] = {}
        written: dict[Path, str] = {}
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if path.is_dir() and not path.is_symlink():
                continue
            if ".ipynb_checkpoints" in rel.parts:
                done.refused.append((str(rel), "Jupyter's autosaved checkpoint, not the submission"))
                continue
            if path.is_symlink():
                done.refused.append((str(rel), "a symbolic link"))
                continue
            if not path.is_file():
                done.refused.append((str(rel), "not a regular file"))
                continue
            if path.suffix != ".ipynb":
                done.refused.append((str(rel), "not a notebook (.ipynb)"))
                continue
            raw = rel.parts[0] if len(rel.parts) > 1 else path.name.split("_")[0]
            nb = _match(path.name, notebooks)
            if nb is None:
                done.refused.append((str(rel), f"not one of {', '.join(notebooks)}"))
                continue
            sid = done.ids.get(raw)
            if sid is None:
                sid = safe_id(raw)
                base, k = sid, 2
                while sid in taken and taken[sid] != raw:  # two people, one sanitised id: keep them apart
                    sid, k = f"{base[:60]}-{k}", k + 1
                done.ids[raw], taken[sid] = sid, raw
            out = course.submitted / sid / chapter
            out.mkdir(parents=True, exist_ok=True)
            if out / f"{nb}.ipynb" in written:  # two files for one student's notebook: the later one is kept
                done.refused.append((written[out / f"{nb}.ipynb"], f"replaced by {rel}, another {nb}.ipynb "
                                     f"of {sid}"))
            written[out / f"{nb}.ipynb"] = str(rel)
            shutil.copyfile(path, out / f"{nb}.ipynb", follow_symlinks=False)
            when = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
            (out / "timestamp.txt").write_text(when.strftime("%Y-%m-%d %H:%M:%S.%f %Z"))
    return done
