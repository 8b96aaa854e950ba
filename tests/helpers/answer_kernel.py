"""A real kernel that has run a solution notebook, where an exercise's checks cell can be run again under many
grader seeds against another answer, with the values its hidden block emitted taken as the grader takes them
(from the ``torchcourse.emit`` audit event, not from display outputs)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import nbformat
from jupyter_client.manager import start_new_kernel

from tests.helpers.notebooks import grade_id, is_checks_cell

# Installed once per kernel: every emit record of a checks cell is kept, as the sandbox's audit hook keeps it.
_CAPTURE = """
import sys as _tc_sys
_tc_emits = []
def _tc_take_emits(event, args):
    if event == "torchcourse.emit":
        _tc_emits.append(args[0])
_tc_sys.addaudithook(_tc_take_emits)
del _tc_take_emits
"""

# Runs one checks cell's source once per seed in the kernel's namespace and writes one JSON list of
# [seed, outcome, message, emitted records] to `out`; outcome is "passed", "CheckFailed" or another
# exception's name, or "stderr" for a cell that ran to the end but wrote to stderr (a warning included,
# each shown as a fresh kernel would show it the first time): plain nbgrader scores such a cell 0.
# A cell still running after `limit` seconds is stopped ("Timeout").
_UNDER_SEEDS = """
import contextlib as _tc_contextlib, io as _tc_io, json as _tc_json, signal as _tc_signal, warnings as _tc_warnings
from torchcourse import grading as _tc_grading
class _TcTimeout(BaseException):
    pass
def _tc_alarm(*_):
    raise _TcTimeout()
_tc_signal.signal(_tc_signal.SIGALRM, _tc_alarm)
_tc_results = []
for _tc_seed in {seeds!r}:
    _tc_grading.set_seed(_tc_seed, secret=True)
    _tc_emits.clear()
    _tc_signal.setitimer(_tc_signal.ITIMER_REAL, {limit!r})
    _tc_err = _tc_io.StringIO()
    try:
        with _tc_warnings.catch_warnings(record=True) as _tc_caught, _tc_contextlib.redirect_stderr(_tc_err):
            _tc_warnings.simplefilter("always")
            exec(compile({source!r}, "<checks cell>", "exec"), globals())
        _tc_said = _tc_err.getvalue() + "".join(str(w.message) for w in _tc_caught)
        _tc_outcome = ["stderr", _tc_said[:300]] if _tc_said else ["passed", ""]
    except _TcTimeout:
        _tc_outcome = ["Timeout", "over {limit} s"]
    except _tc_grading.CheckFailed as _tc_exc:
        _tc_outcome = ["CheckFailed", str(_tc_exc)[:300]]
    except BaseException as _tc_exc:
        _tc_outcome = [type(_tc_exc).__name__, str(_tc_exc)[:300]]
    finally:
        _tc_signal.setitimer(_tc_signal.ITIMER_REAL, 0)
    _tc_results.append([_tc_seed] + _tc_outcome + [_tc_json.loads(_tc_json.dumps(list(_tc_emits), default=str))])
_tc_grading.set_seed(_tc_grading.DEFAULT_SEED)
with open({out!r}, "w") as _tc_f:
    _tc_json.dump(_tc_results, _tc_f)
"""

# Runs one checks cell once for each function of the dict `candidates`, bound to the answer's `name`.
_WITH_EACH = """
_tc_signal.signal(_tc_signal.SIGALRM, _tc_alarm)
_tc_results = []
for _tc_dotted, _tc_function in {candidates}.items():
    globals()[{name!r}] = _tc_function
    _tc_grading.set_seed({seed!r}, secret=True)
    _tc_emits.clear()
    _tc_signal.setitimer(_tc_signal.ITIMER_REAL, {limit!r})
    try:
        exec(compile({source!r}, "<checks cell>", "exec"), globals())
        _tc_outcome = "passed"
    except BaseException as _tc_exc:
        _tc_outcome = type(_tc_exc).__name__
    finally:
        _tc_signal.setitimer(_tc_signal.ITIMER_REAL, 0)
    _tc_results.append([_tc_dotted, _tc_outcome, _tc_json.loads(_tc_json.dumps(list(_tc_emits), default=str))])
_tc_grading.set_seed(_tc_grading.DEFAULT_SEED)
with open({out!r}, "w") as _tc_f:
    _tc_json.dump(_tc_results, _tc_f)
"""


def defined_functions(source: str) -> list[str]:
    """The names of the functions an answer cell defines at its top level."""
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]


def defined_names(source: str) -> list[str]:
    """The names of the functions and classes an answer cell defines at its top level."""
    return [node.name for node in ast.parse(source).body if isinstance(node, (ast.FunctionDef, ast.ClassDef))]


class AnswerKernel:
    """One real kernel that has run a whole solution notebook."""

    def __init__(self, path: Path, workdir: Path):
        self.workdir = workdir
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=str(workdir))
        self.nb = nbformat.read(path, as_version=4)
        ok, err = self.run(_CAPTURE)
        assert ok, err
        for cell in self.nb.cells:
            if cell.cell_type == "code":
                ok, err = self.run(cell.source)
                assert ok, f"{path.name}: solution cell failed: {err}"
                # run as in a fresh kernel, as nbgrader runs it: a warning shows here the first time
                assert not (is_checks_cell(cell) and self.stderr), (
                    f"{path.name}: the checks cell {grade_id(cell)} writes to stderr, so plain nbgrader scores "
                    f"the solution 0: {self.stderr[:300]}")
        self._runs = 0

    def run(self, code: str, timeout: float = 120) -> tuple[bool, str]:
        """Run `code`; (whether it ran without error, the error). What it wrote to stderr is in ``stderr``."""
        said = []

        def hook(msg):
            if msg["msg_type"] == "stream" and msg["content"].get("name") == "stderr":
                said.append(msg["content"]["text"])

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        self.stderr = "".join(said)
        content = reply["content"]
        return content["status"] == "ok", f"{content.get('ename')}: {content.get('evalue')}"

    def check_under_seeds(self, slug: str, seeds: list[int], limit: float = 60) -> list[tuple]:
        """(seed, outcome, message, emitted records) of the checks cell, run once per seed."""
        self._runs += 1
        out = self.workdir / f"seeds-{self._runs}.json"
        code = _UNDER_SEEDS.format(seeds=seeds, source=self.check_source(slug), limit=float(limit), out=str(out))
        ok, err = self.run(code, timeout=limit * len(seeds) + 120)
        assert ok, f"the seed loop itself failed: {err}"
        return [tuple(r) for r in json.loads(out.read_text())]

    def check_with_each(self, slug: str, name: str, candidates: str, seed: int, limit: float = 5) -> list[tuple]:
        """(candidate, outcome, emitted records) of the checks cell run with each function of the kernel's dict
        `candidates` bound to `name`; the seed loop's set-up must have run once (check_under_seeds)."""
        if not self._runs:
            self.check_under_seeds(slug, [seed])
        self._runs += 1
        out = self.workdir / f"each-{self._runs}.json"
        code = _WITH_EACH.format(candidates=candidates, name=name, seed=seed, limit=float(limit),
                                 source=self.check_source(slug), out=str(out))
        ok, err = self.run(code, timeout=3600)
        assert ok, f"the candidate loop itself failed: {err}"
        return [tuple(r) for r in json.loads(out.read_text())]

    def check_source(self, slug: str) -> str:
        return next(c.source for c in self.nb.cells if is_checks_cell(c) and grade_id(c) == slug)

    def answer_source(self, slug: str) -> str:
        return next(c.source for c in self.nb.cells if grade_id(c) == f"{slug}-answer")

    def restore(self, slug: str) -> None:
        """The solution's answer again, so the next case starts from the right answer."""
        ok, err = self.run(self.answer_source(slug))
        assert ok, err

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
