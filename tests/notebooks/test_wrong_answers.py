"""Each exercise's check cell fails every plausible wrong answer and passes the alternative right ones,
under many grader seeds.

wrong_answers/<slug>.py lists answer-cell sources: WRONG (each must make the check fail with its own
``CheckFailed``, not any error, under every seed) and optionally RIGHT (each must pass under every
seed). They run in one real kernel per notebook, after the whole solution notebook, so each check
runs exactly as a learner's would; the grader sets a seed of its own before the checks, so the test
does too, for each of ``SEEDS``.
"""

from __future__ import annotations

import json
import runpy
from pathlib import Path

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel

from tests.helpers.notebooks import grade_id, is_checks_cell, solution_notebooks
from torchcourse.grading import DEFAULT_SEED

pytestmark = pytest.mark.notebooks

WRONG_DIR = Path(__file__).parent / "wrong_answers"
#: The learner's default seed and 19 others: a wrong answer must not pass by the luck of one draw.
SEEDS = [DEFAULT_SEED] + [1_000_003 * k + 17 for k in range(1, 20)]

# Runs one check cell's source once per seed in the kernel's namespace; prints one JSON line of
# [seed, outcome, message] where outcome is "passed", "CheckFailed" or another exception's name.
_UNDER_SEEDS = """
import json as _tc_json
from torchcourse import grading as _tc_grading
_tc_results = []
for _tc_seed in {seeds!r}:
    _tc_grading.set_seed(_tc_seed)
    try:
        exec(compile({source!r}, "<checks cell>", "exec"), globals())
        _tc_results.append([_tc_seed, "passed", ""])
    except _tc_grading.CheckFailed as _tc_exc:
        _tc_results.append([_tc_seed, "CheckFailed", str(_tc_exc)[:300]])
    except BaseException as _tc_exc:
        _tc_results.append([_tc_seed, type(_tc_exc).__name__, str(_tc_exc)[:300]])
_tc_grading.set_seed(_tc_grading.DEFAULT_SEED)
print("TC-RESULTS " + _tc_json.dumps(_tc_results))
"""


def _cases():
    """(notebook, slug, kind, index, source) for every listed answer."""
    by_slug = {}
    for path in solution_notebooks():
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if is_checks_cell(cell):
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

    def run(self, code: str, timeout: float = 60) -> tuple[bool, str]:
        self.stdout = []

        def hook(msg):
            if msg["msg_type"] == "stream" and msg["content"].get("name") == "stdout":
                self.stdout.append(msg["content"]["text"])

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        content = reply["content"]
        return content["status"] == "ok", f"{content.get('ename')}: {content.get('evalue')}"

    def check_under_seeds(self, slug: str) -> list[tuple[int, str, str]]:
        """(seed, outcome, message) of the check cell run once per seed."""
        ok, err = self.run(_UNDER_SEEDS.format(seeds=SEEDS, source=self.check_source(slug)), timeout=600)
        assert ok, f"the seed loop itself failed: {err}"
        line = next(ln for ln in "".join(self.stdout).splitlines() if ln.startswith("TC-RESULTS "))
        return [tuple(r) for r in json.loads(line.removeprefix("TC-RESULTS "))]

    def check_source(self, slug: str) -> str:
        return next(c.source for c in self.nb.cells if is_checks_cell(c) and grade_id(c) == slug)

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


def _case_id(case) -> str:
    """e.g. ``02-autograd/value-engine/WRONG/3``: ``-k 02-autograd`` selects a chapter's cases."""
    path, slug, kind, index, _ = case
    return f"{path.parent.name}/{slug}/{kind}/{index}"


CASES = _cases()


@pytest.mark.parametrize("path,slug,kind,index,source", CASES, ids=[_case_id(c) for c in CASES])
def test_check_judges_the_answer(kernels, path, slug, kind, index, source):
    kernel = kernels(path)
    ok, err = kernel.run(source)
    assert ok, f"the {kind} answer #{index} for {slug} does not even define: {err}"
    outcomes = kernel.check_under_seeds(slug)
    restored, _ = kernel.run(kernel.answer_source(slug))  # later cases start from the right answer
    assert restored
    if kind == "WRONG":
        escaped = [(seed, outcome, msg) for seed, outcome, msg in outcomes if outcome != "CheckFailed"]
        assert not escaped, f"{slug}: wrong answer #{index} was not failed by the check itself: {escaped[:3]}"
    else:
        failed = [(seed, outcome, msg) for seed, outcome, msg in outcomes if outcome != "passed"]
        assert not failed, f"{slug}: right answer #{index} failed: {failed[:3]}"
