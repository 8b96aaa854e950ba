"""A student's submission folder (`submitted/<student>/<chapter>/`) as the grader reads it: what was submitted
(the hash of its notebooks), when (`timestamp.txt`, read as nbgrader reads it), and the chapter's data files
that go beside it into the sandbox.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from datetime import datetime
from pathlib import Path

from grader.course import Course
from grader.nbgrader_compat import parse_utc

TIMESTAMP = "timestamp.txt"  # nbgrader's name for the submission time, beside the notebooks
TIME_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"  # how nbgrader writes it (Exchange.timestamp_format)


def submission_hash(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.iterdir()):
        if p.suffix == ".ipynb" and not p.is_symlink() and p.is_file():
            h.update(p.name.encode() + b"\0")
            with open(p, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
    return h.hexdigest()


TIMESTAMP_MAX = 200  # bytes: nbgrader writes one short line


def read_timestamp(folder: Path) -> tuple[datetime | None, str | None]:
    """The submission time from `timestamp.txt`, as nbgrader reads it (UTC); or None and, when the file is
    there but cannot be used, the reason, so that the time is flagged rather than silently dropped."""
    path = folder / TIMESTAMP
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, None  # no time given (a folder put together by hand): nothing was lost
    except OSError as exc:
        return None, f"timestamp.txt could not be read ({exc.strerror}); the submission time is unknown"
    if stat.S_ISLNK(st.st_mode):
        return None, "timestamp.txt is a symbolic link, not read; the submission time is unknown"
    if not stat.S_ISREG(st.st_mode):
        return None, "timestamp.txt is not a regular file; the submission time is unknown"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(fd, "rb") as f:
            data = f.read(TIMESTAMP_MAX + 1)
    except OSError as exc:
        return None, f"timestamp.txt could not be read ({exc.strerror}); the submission time is unknown"
    if len(data) > TIMESTAMP_MAX:
        return None, f"timestamp.txt is over {TIMESTAMP_MAX} bytes, not a time; the submission time is unknown"
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return None, "timestamp.txt is not text; the submission time is unknown"
    try:
        return parse_utc(text).replace(tzinfo=None), None  # naive, as nbgrader's parse_utc gives it
    except Exception as exc:  # dateutil raises several types for text that is not a time
        why = f"{type(exc).__name__}"
        return None, f"timestamp.txt holds {text[:60]!r}, not a time ({why}); the submission time is unknown"


def time_as_recorded(folder: Path) -> str | None:
    """The submission time as a record holds it."""
    at = read_timestamp(folder)[0]
    return at.isoformat(sep=" ") if at else None


def write_timestamp(folder: Path, when: datetime) -> None:
    """`timestamp.txt` as nbgrader's submit and collect write it (`when` in UTC)."""
    (folder / TIMESTAMP).write_text(when.strftime(TIME_FORMAT))


def copy_timestamp(src: Path, dest: Path) -> None:
    if (src / TIMESTAMP).is_file() and not (src / TIMESTAMP).is_symlink():
        shutil.copyfile(src / TIMESTAMP, dest / TIMESTAMP)


def extra_files(folder: Path, notebooks: list[str]) -> list[str]:
    """Names in the submission folder that are neither the chapter's notebooks nor its time: never run."""
    expected = {f"{nb}.ipynb" for nb in notebooks}
    try:
        return sorted(e.name for e in folder.iterdir() if e.name not in expected and e.name != TIMESTAMP)
    except OSError:
        return []


def chapter_files(course: Course, chapter: str, limit: int = 64 * 2**20) -> dict[str, bytes]:
    """The chapter's data files (anything but notebooks in solutions/<chapter>/, released to learners as is)."""
    files, total = {}, 0
    for p in sorted((course.solutions / chapter).iterdir()):
        if p.is_file() and not p.is_symlink() and p.suffix != ".ipynb" and not p.name.startswith("."):
            total += p.stat().st_size
            if total > limit:
                raise ValueError(f"the data files of {chapter} exceed {limit // 2**20} MiB")
            files[p.name] = p.read_bytes()
    return files
