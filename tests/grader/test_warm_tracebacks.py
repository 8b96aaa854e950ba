"""The warm worker's traceback shortcuts change only the cost: a failed check's traceback reads exactly as
IPython's own formatter writes it, inspect.getmodule is the real one again afterwards, and a getmodule the
notebook installed itself is used and left in place."""

from __future__ import annotations

from tests.helpers.warm_process import run_in_warm_process

SCRIPT = r"""
import inspect
real = inspect.getmodule
shell = inside.shell.make_shell()
tb = shell.InteractiveTB
assert inspect.getmodule is real

cell = (
    "from torchcourse.grading import expect_equal\n"
    "def answer(x):\n"
    "    return x + 1\n"
    "expect_equal(answer(1), 3, call='answer(1)')\n"
)

def traceback_of(fmt):
    inside.shell.COLLECT.reset()
    shell.run_cell(cell, store_history=False)
    errors = [o for o in inside.shell.COLLECT.outputs if o["output_type"] == "error"]
    assert len(errors) == 1 and errors[0]["ename"] == "CheckFailed", inside.shell.COLLECT.outputs
    return errors[0]["traceback"]

fast = traceback_of(tb.structured_traceback)
assert inspect.getmodule is real, "getmodule was not restored"
# IPython's own formatter, unwrapped (the instance attribute hides the class's method)
del tb.structured_traceback
plain = traceback_of(tb.structured_traceback)
assert fast == plain, "the traceback text differs"

# A getmodule of the notebook's own is called as it is, and stays.
tb.structured_traceback = inside.shell._one_module_walk(tb.structured_traceback)
calls = []
def mine(obj, _filename=None):
    calls.append(1)
    return real(obj, _filename)
inspect.getmodule = mine
assert traceback_of(tb.structured_traceback) == plain
assert inspect.getmodule is mine and calls, "the notebook's getmodule was replaced or not used"
print("ok", len(plain))
"""


def test_a_failed_checks_traceback_reads_as_ipython_writes_it(tmp_path):
    done = run_in_warm_process(SCRIPT, tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-3000:]
