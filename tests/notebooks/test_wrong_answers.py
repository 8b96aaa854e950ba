"""Each exercise's check cell fails every plausible wrong answer and passes the alternative right ones.

wrong_answers/<slug>.py lists answer-cell sources: WRONG (each must make the check fail) and
optionally RIGHT (each must pass). They run in one real kernel per notebook, after the whole
solution notebook, so each check runs exactly as a learner's would.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from nbtools import grade_id, is_check_cell, solution_notebooks

pytestmark = pytest.mark.notebooks

WRONG_DIR = Path(__file__).parent / "wrong_answers"


def _cases():
    """(notebook, slug, kind, index, source) for every listed answer."""
    by_slug = {}
    for path in solution_notebooks():
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if is_check_cell(cell):
                by_slug[grade_id(cell)] = path
    cases = []
    for module in sorted(WRONG_DIR.glob("*.py")):
        slug = module.stem
        assert slug in by_slug, f"{module.name}: no exercise with grade_id {slug!r}"
        answers = runpy.run_path(str(module))
        for kind in ("WRONG", "RIGHT"):
            for i, source in enumerate(answers.get(kind, [])):
                cases.append((by_slug[slug], slug, kind, i, source))
    return cases


class Kernel:
    """One real kernel that has run a notebook; runs more code and reports success or the error."""

    def __init__(self, path: Path, workdir: Path):
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(workdir))
        self.nb = nbformat.read(path, as_version=4)
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                ok, err = self.run(cell.source)
                assert ok, f"{path.name}: solution cell failed: {err}"

    def run(self, code: str) -> tuple[bool, str]:
        reply = self.kc.execute_interactive(code, timeout=60, output_hook=lambda msg: None)
        content = reply["content"]
        return content["status"] == "ok", f"{content.get('ename')}: {content.get('evalue')}"

    def check_source(self, slug: str) -> str:
        return next(c.source for c in self.nb.cells if is_check_cell(c) and grade_id(c) == slug)

    def answer_source(self, slug: str) -> str:
        return next(c.source for c in self.nb.cells if grade_id(c) == f"{slug}-answer")

    def close(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


_kernels: dict[Path, Kernel] = {}


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    def kernel_for(path: Path) -> Kernel:
        if path not in _kernels:
            _kernels[path] = Kernel(path, tmp_path_factory.mktemp("wrong"))
        return _kernels[path]

    yield kernel_for
    for kernel in _kernels.values():
        kernel.close()
    _kernels.clear()


def _case_id(value) -> str:
    return str(value) if isinstance(value, (str, int)) and "\n" not in str(value) else ""


@pytest.mark.parametrize("path,slug,kind,index,source", _cases(), ids=_case_id)
def test_check_judges_the_answer(kernels, path, slug, kind, index, source):
    kernel = kernels(path)
    ok, err = kernel.run(source)
    assert ok, f"the {kind} answer #{index} for {slug} does not even define: {err}"
    passed, err = kernel.run(kernel.check_source(slug))
    restored, _ = kernel.run(kernel.answer_source(slug))  # later cases start from the right answer
    assert restored
    if kind == "WRONG":
        assert not passed, f"{slug}: wrong answer #{index} passed the check"
        assert "CheckFailed" in err or "Error" in err
    else:
        assert passed, f"{slug}: right answer #{index} failed the check: {err}"
