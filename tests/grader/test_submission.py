"""A submission folder as the grader reads it (grader/submission.py): the hash of its notebooks and its time."""

from __future__ import annotations

import os

from grader.submission import read_timestamp, submission_hash
from tests.helpers.tiny import answered_nb, write


def test_read_timestamp(tmp_path):
    assert read_timestamp(tmp_path) == (None, None)  # absent: no time was given, nothing to flag
    (tmp_path / "timestamp.txt").write_text("2026-11-30T13:00:00.5+01:00\n")
    when, flag = read_timestamp(tmp_path)
    assert str(when) == "2026-11-30 12:00:00.500000" and flag is None
    (tmp_path / "timestamp.txt").unlink()
    (tmp_path / "real.txt").write_text("2026-11-30 12:00:00 UTC")
    (tmp_path / "timestamp.txt").symlink_to(tmp_path / "real.txt")
    assert read_timestamp(tmp_path) == (None, "timestamp.txt is a symbolic link, not read; the submission time is "
                                              "unknown")
    (tmp_path / "timestamp.txt").unlink()
    (tmp_path / "timestamp.txt").mkdir()
    assert "not a regular file" in read_timestamp(tmp_path)[1]


def test_the_submission_hash_sees_notebooks_only(tmp_path):
    write(answered_nb(), tmp_path / "nb.ipynb")
    first = submission_hash(tmp_path)
    (tmp_path / "notes.txt").write_text("x")
    os.symlink(tmp_path / "nb.ipynb", tmp_path / "link.ipynb")
    assert submission_hash(tmp_path) == first
    write(answered_nb(x="    return 0"), tmp_path / "nb.ipynb")
    assert submission_hash(tmp_path) != first
