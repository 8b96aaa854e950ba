"""Errors an instructor must see, from a real sandbox worker: a course library module that fails to preload,
and a course library that cannot be imported at all inside the sandbox, are named with their error by
autograde; grading goes on where it can."""

from __future__ import annotations

import shutil

import pytest

from grader import worker_start
from tests.helpers.course import CHAPTER, REPO, fixture_course, submit_case

pytestmark = pytest.mark.grading


def _worker_importing_from(lib, tmp_path, monkeypatch):
    """The sandbox worker, with `lib` first on its path and inside its filesystem (what a course library
    under construction looks like to it)."""
    marker = "from __future__ import annotations\n"
    worker = tmp_path / "inside"
    shutil.copytree(worker_start.WORKER, worker, ignore=shutil.ignore_patterns("__pycache__"))
    base = worker / "base.py"  # the first of the worker's modules to import the library
    source = base.read_text()
    assert marker in source
    base.write_text(source.replace(marker, marker + f"import sys as _sys\n_sys.path.insert(0, {str(lib)!r})\n", 1))
    monkeypatch.setattr(worker_start, "WORKER", worker)
    dirs = worker_start._library_dirs
    monkeypatch.setattr(worker_start, "_library_dirs", lambda: sorted({*dirs(), lib}))


def test_a_module_that_fails_to_preload_is_named_and_grading_goes_on(tmp_path, monkeypatch, capsys):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.sandbox import Limits

    lib = tmp_path / "lib"
    shutil.copytree(REPO / "src" / "torchcourse", lib / "torchcourse", ignore=shutil.ignore_patterns("__pycache__"))
    (lib / "torchcourse" / "zz_half_written.py").write_text("raise RuntimeError('half-written widget')\n")
    _worker_importing_from(lib, tmp_path, monkeypatch)
    root = fixture_course(tmp_path)
    submit_case(root, "honest-correct")
    out = autograde(Course(root), CHAPTER, workers=1, progress=False, limits=Limits(cell_timeout=20, budget=120))
    assert out["honest-correct"]["score"] == 6.0 and out.not_recorded == {}
    named = [w for w in out.warnings if "torchcourse.zz_half_written: RuntimeError: half-written widget" in w]
    assert len(named) == 1, out.warnings
    assert "autograde: WARNING: the sandbox could not import the course library module " \
           "torchcourse.zz_half_written: RuntimeError: half-written widget" in capsys.readouterr().err


def test_a_course_library_the_sandbox_cannot_import_is_reported(tmp_path, monkeypatch, capsys):
    import warnings

    from grader.__main__ import main

    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # main() sets it for the process
    lib = tmp_path / "lib"
    (lib / "torchcourse").mkdir(parents=True)
    (lib / "torchcourse" / "__init__.py").write_text("raise ImportError('the course library is broken')\n")
    _worker_importing_from(lib, tmp_path, monkeypatch)
    root = fixture_course(tmp_path)
    submit_case(root, "honest-correct")
    code = main(["--root", str(root), "autograde", "--workers", "1", "--cell-timeout", "20"])
    err = capsys.readouterr().err
    assert "WARNING: the sandbox could not import the course library module torchcourse: ImportError: " \
           "the course library is broken" in err
    # Without its library the solution cannot pass its own checks: nobody is graded, and the exit code says so.
    assert code == 1 and f"autograde: {CHAPTER} not graded: the solution fails its own test cell" in err
    assert not (root / "autograded" / "honest-correct" / CHAPTER / ".torchcourse-grade.json").exists()
