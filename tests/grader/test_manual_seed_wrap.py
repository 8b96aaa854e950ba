"""The warm worker wraps torch.manual_seed as importing TorchDynamo would, without importing it: a job that
later imports dynamo (torch.func, torch.profiler, torch.compile) rebinds nothing the integrity snapshot
holds, and the wrapper seeds exactly as torch.random.manual_seed does, before and after dynamo is loaded."""

from __future__ import annotations

from tests.helpers.warm_process import run_in_warm_process

SCRIPT = r"""
import sys, torch
assert "torch._dynamo" not in sys.modules, "the worker imported dynamo for chapter 1"
wrapped = torch.manual_seed
assert wrapped is not torch.random.manual_seed and wrapped.__wrapped__ is torch.random.manual_seed

def draws(seed_fn):
    seed_fn(1234)
    return torch.randn(5).tolist()

want = draws(torch.random.manual_seed)
assert draws(torch.manual_seed) == want
assert "torch._dynamo" not in sys.modules, "calling the wrapper imported dynamo"
torch.func.grad(lambda v: (v ** 2).sum())(torch.ones(2))  # imports dynamo
assert "torch._dynamo" in sys.modules
assert torch.manual_seed is wrapped, "importing dynamo rebound torch.manual_seed"
assert draws(torch.manual_seed) == want
assert torch.random.manual_seed.__dynamo_disable is not None
print("ok")
"""


def test_manual_seed_is_wrapped_once_and_seeds_the_same(tmp_path):
    chapter_1 = "torchcourse.tensors,torchcourse.grading"
    done = run_in_warm_process(SCRIPT, tmp_path, preload=chapter_1)
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-3000:]


def test_a_chapter_whose_library_package_names_dynamo_gets_it_warm(tmp_path):
    script = ('import sys, torch\nassert "torch._dynamo" in sys.modules\n'
              'assert torch.manual_seed.__wrapped__ is torch.random.manual_seed\nprint("ok")\n')
    done = run_in_warm_process(script, tmp_path, preload="torchcourse.autograd.jacobian,torchcourse.grading")
    assert done.returncode == 0 and done.stdout.startswith("ok"), done.stdout[-2000:] + done.stderr[-3000:]
