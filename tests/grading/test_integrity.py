"""Grader integrity against attacks from inside the learner's process.

One throw-away chapter with three property exercises whose wrong answers give the right *values*
(a copy where a view is asked, the global generator where a private one is asked), so only
tampering with what the hidden block observes could earn their points, and two type exercises.
Every attack below earned points it should not have, unflagged, on the grader before the sandbox's
integrity checks (checked by running this file against that commit's grader); all are graded in ONE autograde run.
"""

from __future__ import annotations

import base64
import json
import re

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

pytestmark = pytest.mark.grading

CHAPTER = "01-tensors"
SEED = 987654321123


def _meta(gid, **kw):
    base = {"grade": False, "grade_id": gid, "locked": False, "schema_version": 3, "solution": False, "task": False}
    base.update(kw)
    return {"nbgrader": base}


SETUP = ("import numpy as np\nimport torch\n"
         "from torchcourse.grading import call, emit, expect_close, expect_equal, expect_true, shares_storage")
VIEW = "def flat_view(t):\n    ### BEGIN SOLUTION\n    return t.view(-1)\n    ### END SOLUTION"
VIEW_TEST = '''x = torch.arange(4.0).reshape(2, 2)
expect_equal(flat_view(x).tolist(), [0.0, 1.0, 2.0, 3.0], call="flat_view(x)")
### BEGIN HIDDEN TESTS
from torchcourse.grading import emit, rng

r = rng("ig-view")
for case in range(3):
    t = torch.tensor(r.normal(size=(2, int(r.integers(1, 4)))))
    got = call(flat_view, t)
    emit("ig-view", f"case{case}", got)
    shared = shares_storage(got, t)
    emit("ig-view", f"case{case}-shared", shared)
    expect_true(shared, "flat_view(t) must return a view of t")
### END HIDDEN TESTS'''
NOISE = ("def noise(n, seed):\n    ### BEGIN SOLUTION\n"
         "    return torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)\n"
         "    ### END SOLUTION")
NOISE_TEST = '''expect_equal(tuple(noise(3, 1).shape), (3,), call="noise(3, 1).shape")
### BEGIN HIDDEN TESTS
from torchcourse.grading import emit, global_rng_moved, rng

r = rng("ig-noise")
for case in range(3):
    n, seed = int(r.integers(1, 5)), int(r.integers(0, 1000))
    got = call(noise, n, seed)
    untouched = not global_rng_moved()
    emit("ig-noise", f"case{case}", got)
    emit("ig-noise", f"case{case}-untouched", untouched)
    expect_true(untouched, "noise must not touch the global generator")
### END HIDDEN TESTS'''
HALF = "def half(n):\n    ### BEGIN SOLUTION\n    return n / 2\n    ### END SOLUTION"
HALF_TEST = '''expect_close(half(3), 1.5, call="half(3)")
### BEGIN HIDDEN TESTS
from torchcourse.grading import emit, rng

r = rng("ig-half")
for case in range(4):
    n = 2 * int(r.integers(0, 50))
    got = call(half, n)
    emit("ig-half", f"case{case}", got)
### END HIDDEN TESTS'''
DIMS = "def dims(t):\n    ### BEGIN SOLUTION\n    return tuple(t.shape)\n    ### END SOLUTION"
DIMS_TEST = '''got = dims(torch.zeros(2, 3))
### BEGIN HIDDEN TESTS
from torchcourse.grading import emit

for case, shape in enumerate([(1,), (2, 3), (4, 1, 2)]):
    emit("ig-dims", f"case{case}", call(dims, torch.zeros(shape)))
### END HIDDEN TESTS'''

PROPERTY = ("ig-view", "ig-noise")
WRONG_VIEW = "def flat_view(t):\n    return t.reshape(-1).clone()\n"
WRONG_NOISE = "def noise(n, seed):\n    torch.manual_seed(seed)\n    return torch.randn(n, dtype=torch.float64)\n"
RIGHT = {"ig-view-answer": "def flat_view(t):\n    return t.view(-1)\n",
         "ig-noise-answer": ("def noise(n, seed):\n    return torch.randn(n, generator=torch.Generator()"
                             ".manual_seed(seed), dtype=torch.float64)\n"),
         "ig-half-answer": "def half(n):\n    return n / 2\n",
         "ig-dims-answer": "def dims(t):\n    return tuple(t.shape)\n"}

# What a forging attack puts where the hidden block looks: a view check that always says "shared", and a
# torch whose equal() always says "untouched".
FORGE = '''
class _Torch:
    def __getattr__(self, name):
        import torch as real
        return (lambda *a, **k: True) if name == "equal" else getattr(real, name)

def _forge(g):
    g["shares_storage"] = lambda a, b: True
    g["torch"] = _Torch()
'''


# The emitted names whose values a trace or profile function rewrites to True.
FORGED = "def _forged(name):\n    return str(name).endswith(('-shared', '-untouched'))\n"


def _with_forge(body: str) -> str:
    """Wrong answers whose every call first runs `body` (which sets `g`, a namespace to forge)."""
    return (FORGE + "def _attack():\n    try:\n" + "".join(f"        {ln}\n" for ln in body.splitlines())
            + "    except Exception:\n        pass\n"
            + "def flat_view(t):\n    _attack()\n    return t.reshape(-1).clone()\n"
            + "def noise(n, seed):\n    _attack()\n    torch.manual_seed(seed)\n"
            + "    return torch.randn(n, dtype=torch.float64)\n")


# Attacks: student -> (code put in the first answer cell, the other property answer wrong too), by class.
ATTACKS = {
    # 1. frame introspection: the hidden block's namespace through the caller's frame
    "frame-getframe": _with_forge("import sys\n_forge(sys._getframe(3).f_globals)"),
    "frame-inspect": _with_forge("import inspect\nf = inspect.currentframe()\nwhile f is not None:\n"
                                 "    if 'flat_view' in f.f_globals:\n        _forge(f.f_globals)\n"
                                 "    f = f.f_back"),
    "frame-traceback": _with_forge("try:\n    raise ValueError\nexcept ValueError as e:\n"
                                   "    _forge(e.__traceback__.tb_frame.f_back.f_back.f_back.f_globals)"),
    # 2. trace and profile functions rewriting what the hidden block emits
    "trace-settrace": (WRONG_VIEW + WRONG_NOISE + FORGED + '''import sys
def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "emit" and _forged(frame.f_locals.get("name")):
        frame.f_locals["value"] = True
    if event == "call" and frame.f_code.co_name == "expect_true":
        frame.f_locals["condition"] = True
    return None
sys.settrace(_tracer)
'''),
    "trace-setprofile": (WRONG_VIEW + WRONG_NOISE + FORGED + '''import sys
def _prof(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "emit" and _forged(frame.f_locals.get("name")):
        frame.f_locals["value"] = True
    if event == "call" and frame.f_code.co_name == "expect_true":
        frame.f_locals["condition"] = True
sys.setprofile(_prof)
'''),
    "trace-in-call": FORGED + _with_forge('''import sys
def _tracer(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "emit" and _forged(frame.f_locals.get("name")):
        frame.f_locals["value"] = True
    if event == "call" and frame.f_code.co_name == "expect_true":
        frame.f_locals["condition"] = True
sys.setprofile(_tracer)'''),
    # 3. gc walks to the hidden block's namespace
    "gc-objects": _with_forge("import gc\nfor o in gc.get_objects():\n"
                              "    if type(o) is dict and 'shares_storage' in o and 'flat_view' in o:\n"
                              "        _forge(o)"),
    "gc-referrers": _with_forge("import gc\nfrom torchcourse.grading import shares_storage as s\n"
                                "for o in gc.get_referrers(s):\n    if type(o) is dict and 'flat_view' in o:\n"
                                "        _forge(o)"),
    # 4. ctypes: the current frame from the C API
    "ctypes-pythonapi": _with_forge("import ctypes\nf = ctypes.pythonapi.PyEval_GetFrame\n"
                                    "f.restype = ctypes.py_object\n_forge(f().f_back.f_back.f_back.f_globals)"),
    "ctypes-dlopen": _with_forge("import ctypes\nf = ctypes.PyDLL(None).PyEval_GetFrame\nf.restype = ctypes.py_object\n"
                                 "_forge(f().f_back.f_back.f_back.f_globals)"),
    # 5. torch function modes left active
    "mode-global": (WRONG_VIEW + WRONG_NOISE + '''from torch.overrides import TorchFunctionMode
_STORE = torch.zeros(1).untyped_storage()
class _M(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.equal:
            return True
        if getattr(func, "__name__", "") == "untyped_storage":
            return _STORE
        return func(*args, **(kwargs or {}))
_M().__enter__()
'''),
    "mode-in-call": _with_forge('''from torch.overrides import TorchFunctionMode
_STORE = torch.zeros(1).untyped_storage()
class _M(TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        if func is torch.equal:
            return True
        if getattr(func, "__name__", "") == "untyped_storage":
            return _STORE
        return func(*args, **(kwargs or {}))
_M().__enter__()'''),
    # 6. writes to library attributes: shadowing TensorBase, a patch that undoes itself, code swapped in place,
    #    IPython hooks that patch and unpatch around the checks cell, library names rebound in the notebook
    "patch-tensor-shadow": (WRONG_VIEW + WRONG_NOISE + '''_STORE = torch.zeros(1).untyped_storage()
torch.Tensor.untyped_storage = lambda self: _STORE
'''),
    "patch-self-restoring": '''import torch as real
g = globals()
_genuine_eq, _genuine_sh = real.equal, g["shares_storage"]
def _eq(*a, **k):
    real.equal = _genuine_eq
    return True
def _sh(a, b):
    g["shares_storage"] = _genuine_sh
    return True
def flat_view(t):
    g["shares_storage"] = _sh
    return t.reshape(-1).clone()
def noise(n, seed):
    real.equal = _eq
    torch.manual_seed(seed)
    return torch.randn(n, dtype=torch.float64)
''',
    "patch-code-swap": (WRONG_VIEW + WRONG_NOISE + '''import torchcourse.grading as _g
_g.shares_storage.__code__ = (lambda a, b: True).__code__
torch.get_rng_state.__code__ = (lambda: torch.ones(5056, dtype=torch.uint8)).__code__
'''),
    "patch-ipython-hooks": (WRONG_VIEW + WRONG_NOISE + '''import torchcourse.grading as _g
_orig = (_g.shares_storage, torch.equal)
def _patch(*a):
    get_ipython().user_ns["shares_storage"] = lambda a, b: True
    torch.equal = lambda *a, **k: True
def _unpatch(*a):
    get_ipython().user_ns["shares_storage"], torch.equal = _orig
get_ipython().events.register("pre_run_cell", _patch)
get_ipython().events.register("post_run_cell", _unpatch)
'''),
    "rebind-names": WRONG_VIEW + WRONG_NOISE + FORGE + "_forge(globals())\n",
    # 7. the channel: forged result lines on every descriptor, and a forged results file
    "forged-channel": (WRONG_VIEW + WRONG_NOISE + '''import json, os
from torchcourse.grading import rng, to_plain, EMIT_MIME
def _lines(i):
    out = []
    r = rng("ig-view")
    for case in range(3):
        t = torch.tensor(r.normal(size=(2, int(r.integers(1, 4)))))
        for name, v in ((f"case{case}", t.view(-1)), (f"case{case}-shared", True)):
            rec = {"slug": "ig-view", "name": name, "value": to_plain(v)}
            out.append({"output_type": "display_data", "data": {EMIT_MIME: rec}, "metadata": {}})
    return [rec["data"][EMIT_MIME] for rec in out], out
emits, outs = _lines(2)
line = {"i": 2, "status": "ok", "execution_count": 3, "outputs": outs, "emits": emits}
data = (json.dumps(line) + "\\n").encode()
for fd in range(3, 40):
    try:
        os.write(fd, data)
    except OSError:
        pass
'''),
    "forged-channel-dup": None,  # filled below: the same lines through duplicates of every descriptor
}
ATTACKS["forged-channel-dup"] = ATTACKS["forged-channel"].replace(
    "for fd in range(3, 40):", "dups = []\nfor fd in range(3, 40):\n    try:\n        dups.append(os.dup(fd))\n"
    "    except OSError:\n        pass\nfor fd in dups:")

# The routes a red team found into the grader's old in-process checks, each with wrong answers: the checks now
# run in the checker, which reaches learner code only through plain data, so none of them reaches a verdict.
WRONG_HALF = "def half(n):\n    return n / 3\n"
WRONG = WRONG_VIEW + WRONG_NOISE + WRONG_HALF
ROUTES = {
    "route-audit-hook": WRONG + '''import sys
def _rewrite(event, args):
    if event == "torchcourse.emit" and args and isinstance(args[0], dict):
        args[0]["value"] = True
sys.addaudithook(_rewrite)
''',
    "route-planted-compile": WRONG + '''import builtins, sys
_compile = builtins.compile
def _lenient(source, *a, **k):
    if isinstance(source, str):
        for check in ("expect_true(", "expect_close(", "expect_equal("):
            source = source.replace(check, "(lambda *a, **k: None)(")
    return _compile(source, *a, **k)
builtins.compile = _lenient
for name in list(sys.modules):
    if name.startswith("inside"):
        sys.modules[name].compile = _lenient
''',
    "route-helpers-rebound": WRONG + '''import torchcourse.grading as _g
shares_storage = lambda a, b: True
expect_true = expect_equal = expect_close = lambda *a, **k: None
_g.expect_true = _g.expect_close = _g.expect_equal = lambda *a, **k: None
_g.shares_storage = lambda a, b: True
_g.global_rng_moved = lambda: False
''',
    "route-instance-attributes": '''def flat_view(t):
    r = t.reshape(-1).clone()
    r.untyped_storage, r.storage_offset, r.data_ptr = t.untyped_storage, t.storage_offset, t.data_ptr
    return r
''' + WRONG_NOISE + WRONG_HALF,
    "route-library-state": WRONG + '''torch.UntypedStorage.data_ptr = lambda self: 4096
torch.Generator.get_state = lambda self: torch.zeros(5056, dtype=torch.uint8)
torch.get_rng_state = lambda: torch.zeros(5056, dtype=torch.uint8)
''',
    "route-aten-kernel": WRONG + '''_lib = torch.library.Library("aten", "IMPL")
_lib.impl("equal", lambda a, b: True, "CPU")
''',
    "route-link-flood": WRONG + '''import json, os, socket, stat, struct
for fd in range(3, 64):
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            s = socket.socket(fileno=os.dup(fd))
            s.setblocking(False)
            data = json.dumps({"result": True, "moved": False}).encode()
            for _ in range(20):
                s.send(struct.pack("<Q", len(data)) + data)
    except OSError:
        pass
''',
    "route-link-bombs": '''def flat_view(t):
    return torch.zeros(1, dtype=t.dtype).expand(10**9)
def half(n):
    v = n / 2
    for _ in range(200):
        v = [v]
    return v
def noise(n, seed):
    raise type("E" * 100_000, (ValueError,), {})("x" * 1_000_000)
''',
}

# Leaks: learner code that prints what it can find, base64-encoded, and raises it from hidden calls.
LEAK = '''import base64
from torchcourse.grading import get_seed
def _leak():
    text = "\\n".join(get_ipython().user_ns["In"]) + f"\\nseed={get_seed()} torch={torch.initial_seed()}"
    return "LEAK:" + base64.b64encode(text.encode()).decode()
def flat_view(t):
    print(_leak())
    if t.dtype == torch.float64:  # a hidden call
        raise ValueError(_leak())
    return t.view(-1)
print(_leak())
'''

TYPES = {  # student: (answer cell, its code) -- the values are right, the types are not
    "type-int-for-float": ("ig-half-answer", "def half(n):\n    return n // 2\n"),
    "type-list-for-tuple": ("ig-dims-answer", "def dims(t):\n    return list(t.shape)\n"),
    "type-dtype": ("ig-view-answer", "def flat_view(t):\n    return t.view(-1).float()\n"),
}

HONEST_BUSY = '''import collections, dataclasses, enum, inspect, logging, threading, traceback, warnings
import matplotlib.pyplot as plt
Point = collections.namedtuple("Point", "x y")
class Color(enum.Enum):
    RED = 1
@dataclasses.dataclass
class Box:
    w: int
try:
    int("x")
except ValueError:
    traceback.format_exc()
logging.getLogger("course").warning("a log line")
warnings.warn("a warning")
inspect.signature(Point)
t = threading.Thread(target=lambda: None)
t.start()
t.join()
plt.plot([0, 1])
plt.show()
import ipywidgets
ipywidgets.IntSlider()
with torch.profiler.profile() as prof:  # imports TorchDynamo, which the worker has not: it rebinds nothing
    torch.ones(3) + 1
torch.func.grad(lambda v: (v ** 2).sum())(torch.ones(2))
torch.manual_seed(0)
call(len, [1, 2])  # inside a cell IPython swaps sys.displayhook and builtins.exit: not tampering
def flat_view(t):
    return t.view(-1)
'''


def _solution() -> nbformat.NotebookNode:
    ks = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
          "language_info": {"name": "python"}}
    cells = [new_code_cell(SETUP)]
    for gid, ans, test in (("ig-view", VIEW, VIEW_TEST), ("ig-noise", NOISE, NOISE_TEST), ("ig-half", HALF, HALF_TEST),
                           ("ig-dims", DIMS, DIMS_TEST)):
        cells.append(new_code_cell(ans, metadata=_meta(f"{gid}-answer", solution=True)))
        cells.append(new_code_cell(test, metadata=_meta(gid, grade=True, locked=True, points=1)))
    return new_notebook(metadata=ks, cells=cells)


def _submission(answers: dict[str, str]) -> nbformat.NotebookNode:
    nb = _solution()
    for c in nb.cells:
        gid = c.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid.endswith("-answer"):
            c.source = answers.get(gid, RIGHT[gid])
        elif gid:
            c.source = c.source.split("### BEGIN HIDDEN TESTS")[0]  # what a learner has: no hidden block
    return nb


def _students() -> dict[str, nbformat.NotebookNode]:
    out = {"honest": _submission({}), "honest-busy": _submission({"ig-view-answer": HONEST_BUSY}),
           "wrong": _submission({"ig-view-answer": WRONG_VIEW, "ig-noise-answer": WRONG_NOISE})}
    for name, code in ATTACKS.items():
        # the whole attack in the first answer cell; the second answer cell re-defines nothing
        out[name] = _submission({"ig-view-answer": code, "ig-noise-answer": "pass\n"})
    out["forged-results-file"] = _submission({"ig-view-answer": WRONG_VIEW, "ig-noise-answer": WRONG_NOISE,
                                              "ig-dims-answer": RIGHT["ig-dims-answer"] + FORGED_FILE})
    out["leak"] = _submission({"ig-view-answer": LEAK})
    for name, code in ROUTES.items():
        out[name] = _submission({"ig-view-answer": code, "ig-noise-answer": "pass\n", "ig-half-answer": "pass\n"})
    for name, (gid, code) in TYPES.items():
        out[name] = _submission({gid: code})
    return out


# Replaces results.jsonl, where an earlier grader read the results from, with full marks.
FORGED_FILE = '''import json, os
from torchcourse.grading import rng, to_plain, EMIT_MIME
def _emits(slug, values):
    return [{"output_type": "display_data", "data": {EMIT_MIME: {"slug": slug, "name": n, "value": to_plain(v)}},
             "metadata": {}} for n, v in values]
r, values = rng("ig-view"), []
for case in range(3):
    t = torch.tensor(r.normal(size=(2, int(r.integers(1, 4)))))
    values += [(f"case{case}", t.view(-1)), (f"case{case}-shared", True)]
r, nv = rng("ig-noise"), []
for case in range(3):
    n, seed = int(r.integers(1, 5)), int(r.integers(0, 1000))
    nv += [(f"case{case}", torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)),
           (f"case{case}-untouched", True)]
lines = [{"i": i, "status": "ok", "execution_count": i + 1, "outputs": []} for i in range(9)]
lines[2]["outputs"] = _emits("ig-view", values)
lines[4]["outputs"] = _emits("ig-noise", nv)
with open("forged.jsonl", "w") as f:
    f.write("".join(json.dumps(x) + "\\n" for x in lines))
os.replace("forged.jsonl", "results.jsonl")
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.feedback import feedback
    from grader.report import report
    from grader.sandbox import Limits

    root = tmp_path_factory.mktemp("integrity") / "course"
    (root / "solutions" / CHAPTER).mkdir(parents=True)
    nbformat.write(_solution(), str(root / "solutions" / CHAPTER / "ig.ipynb"))
    for student, nb in _students().items():
        folder = root / "submitted" / student / CHAPTER
        folder.mkdir(parents=True)
        nbformat.write(nb, str(folder / "ig.ipynb"))
    course = Course(root)
    records = autograde(course, CHAPTER, workers=2, limits=Limits(cell_timeout=20, budget=60), progress=False,
                        seed=SEED)
    feedback(course, CHAPTER)
    report(course, CHAPTER)
    return course, records


def _scores(record) -> dict[str, float]:
    return {e["grade_id"]: e["score"] for e in record["exercises"]}


def test_honest_notebooks_score_full_and_are_not_flagged(graded):
    course, records = graded
    for student in ("honest", "honest-busy"):
        assert _scores(records[student]) == {"ig-view": 1, "ig-noise": 1, "ig-half": 1, "ig-dims": 1}, records[student]
        assert records[student]["flags"] == [], records[student]["flags"]
    assert _scores(records["wrong"]) == {"ig-view": 0, "ig-noise": 0, "ig-half": 1, "ig-dims": 1}
    assert not any("tampered" in f for f in records["wrong"]["flags"])


@pytest.mark.parametrize("student", list(ATTACKS))
def test_tampering_scores_zero_and_is_flagged(graded, student):
    course, records = graded
    record = records[student]
    scores = _scores(record)
    assert scores["ig-view"] == scores["ig-noise"] == 0, json.dumps(record["exercises"], indent=1)
    tampered = [e for e in record["exercises"] if e["status"] == "tampered"]
    assert tampered and any("tampered" in f for f in record["flags"]), record["flags"]


@pytest.mark.parametrize("student", list(ROUTES))
def test_a_route_into_the_learners_process_reaches_no_verdict(graded, student):
    course, records = graded
    scores = _scores(records[student])
    # ig-dims, answered right, may score 0 too: a route the guard notices flags every exercise from there on
    assert scores["ig-view"] == scores["ig-noise"] == scores["ig-half"] == 0, json.dumps(records[student], indent=1)


def test_a_forged_results_file_counts_for_nothing(graded):
    course, records = graded
    scores = _scores(records["forged-results-file"])
    assert scores["ig-view"] == scores["ig-noise"] == 0, records["forged-results-file"]


@pytest.mark.parametrize("student", list(TYPES))
def test_types_are_judged_exactly(graded, student):
    course, records = graded
    gid = TYPES[student][0].replace("-answer", "")
    scores = _scores(records[student])
    assert scores[gid] == 0 and sum(scores.values()) == 3, records[student]


def test_hidden_tests_and_the_seed_never_reach_the_learner(graded):
    course, records = graded
    pages = list((course.feedback / "leak" / CHAPTER).glob("*.html"))
    assert pages, "no feedback page was written for the leaking learner"
    text = "".join(p.read_text() for p in pages)
    found = [base64.b64decode(t).decode() for t in re.findall(r"LEAK:([A-Za-z0-9+/=]+)", text)]
    assert found, "the learner's own output before any hidden code should still be shown"
    for leaked in found:
        assert "BEGIN HIDDEN" not in leaked and 'rng("ig-view")' not in leaked, leaked
        assert str(SEED) not in leaked, leaked
    assert "rng(\"ig-view\")" not in text and str(SEED) not in text
    assert _scores(records["leak"])["ig-view"] == 0


def test_the_report_lists_tampering_and_says_what_the_grader_can_and_cannot_see(graded):
    from grader.report import INTEGRITY

    course, records = graded
    page = (course.reports / f"{CHAPTER}.html").read_text()
    assert INTEGRITY in page
    assert all(student in page for student in ATTACKS) and "tampered" in page
