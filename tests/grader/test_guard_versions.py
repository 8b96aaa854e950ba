"""The guard skips a namespace it found as in the snapshot until that namespace's dict version moves on: so a
change made after a clean check is still found at the next one, and found again at every check while it
lasts, whether it is in a library module, builtins, a library class or the notebook's own names."""

from __future__ import annotations

from tests.helpers.warm_process import run_in_warm_process

SCRIPT = r"""
import os, sys, types
import numpy, torch, builtins
shell = inside.shell.make_shell()
snap = inside.guard._snapshot()
r, fd = os.pipe()
grading = sys.modules.get("torchcourse.grading")
hook, check, state = inside.guard.make_guard(shell, snap, fd, grading)
assert check("start") == [], check("start")
assert check("again") == []  # now skipped as clean

def found(where):
    return " ".join(check(where))

real_allclose, real_equal = numpy.testing.assert_allclose, numpy.testing.assert_equal
numpy.testing.assert_allclose = lambda *a, **k: None
assert "numpy.testing.assert_allclose" in found("patched"), found("patched")
assert "numpy.testing.assert_allclose" in found("still patched")  # reported while it lasts
numpy.testing.assert_allclose = real_allclose
assert check("restored") == []  # scanned, and now remembered as clean at this version
numpy.testing.assert_equal = lambda *a, **k: None
assert "numpy.testing.assert_equal" in found("patched after a clean scan"), found("patched after a clean scan")
numpy.testing.assert_equal = real_equal
assert check("restored again") == []

real_len, real_ascii = builtins.len, builtins.ascii
builtins.len = lambda x: 0
assert "builtins.len" in found("builtins")
builtins.len = real_len
assert check("builtins restored") == []
builtins.ascii = lambda *a: ""
assert "builtins.ascii" in found("builtins after a clean scan")
builtins.ascii = real_ascii
assert check("builtins restored again") == []

torch.Tensor.add = lambda self, *a, **k: self
assert "torch.Tensor.add" in found("class")
del torch.Tensor.add
assert check("class restored") == []

shell.user_ns["np"] = numpy
assert check("honest np") == []
shell.user_ns["np"] = types.ModuleType("numpy")
assert "'np'" in found("fake np") and "'np'" in found("fake np again")
shell.user_ns["np"] = numpy
assert check("np restored") == []
print("ok")
"""


def test_a_change_after_a_clean_check_is_found(tmp_path):
    done = run_in_warm_process(SCRIPT, tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-3000:]
