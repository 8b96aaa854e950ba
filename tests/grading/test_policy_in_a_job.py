"""The sandbox policy (grader/inside/policy.py) holds in a real job: every system call its seccomp table
denies is refused there, with the table's errno."""

from __future__ import annotations

import json
import os

import pytest

from grader.inside import policy

pytestmark = pytest.mark.grading


def test_every_denied_system_call_is_refused_in_a_job(sandbox_facilities):
    from grader.sandbox import Limits, SandboxWorker

    if not sandbox_facilities.drop_uid:
        pytest.skip("the filter comes with the job's own uid, which this machine cannot give: "
                    + "; ".join(sandbox_facilities.missing))
    if os.uname().machine not in policy.SYSCALLS:
        pytest.skip(f"no system call numbers for {os.uname().machine}: no filter is installed there")
    _, numbers = policy.SYSCALLS[os.uname().machine]
    rows = {name: (numbers[name], policy.SECCOMP_ONLY_WITH_FLAGS.get(name, 0)) for name in policy.SECCOMP_DENIED}
    # In a Python process of the job's own (ctypes in a notebook cell is itself flagged as tampering): each call
    # with the flags its row names, and nothing else to act on, so a call let through fails some other way.
    probe = ("import ctypes, json\nlibc = ctypes.CDLL(None, use_errno=True)\ngot = {}\n"
             f"for name, (nr, flags) in {rows!r}.items():\n"
             "    ctypes.set_errno(0)\n"
             "    got[name] = [libc.syscall(nr, flags, 0, 0, 0, 0), ctypes.get_errno()]\n"
             "print(json.dumps(got))\n")
    cell = (f"import subprocess, sys\nprobe = {probe!r}\n"
            "print(subprocess.run([sys.executable, '-c', probe], capture_output=True, text=True).stdout)")
    with SandboxWorker(Limits(cell_timeout=30, budget=60)) as w:
        raw = w.run([cell], seed=1)
    text = "".join(o.get("text", "") for o in raw.cells[0].outputs)
    got = json.loads(text.strip().splitlines()[-1])
    assert got == {name: [-1, errno] for name, errno in policy.SECCOMP_DENIED.items()}
