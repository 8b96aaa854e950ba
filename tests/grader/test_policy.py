"""The sandbox policy (grader/inside/policy.py) is what the code applies, read with no process started: the
seccomp filter, run on each call of the table, refuses it with the table's errno and lets the rest through;
the bubblewrap command binds exactly the table's entries, and only the jobs' folder writable."""

from __future__ import annotations

from pathlib import Path

import pytest

from grader import worker_start
from grader.inside import confine, policy

SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000


def run_filter(prog, arch: int, nr: int, flags: int = 0) -> int:
    """What the classic BPF program `prog` returns for a call: seccomp_data's arch at offset 4, nr at 0, the
    first argument's low 32 bits at 16 (the instructions the filter uses, and no others)."""
    data = {0: nr, 4: arch, 16: flags & 0xFFFFFFFF}
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = prog[pc]
        if code == 0x20:  # BPF_LD | BPF_W | BPF_ABS
            acc, pc = data[k], pc + 1
        elif code in (0x15, 0x35, 0x45):  # BPF_JMP | BPF_JEQ, BPF_JGE, BPF_JSET (immediate)
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += 1 + (jt if hit else jf)
        elif code == 0x06:  # BPF_RET
            return k
        else:
            raise AssertionError(f"an instruction this test does not know: {code:#x}")


@pytest.mark.parametrize("machine", sorted(policy.SYSCALLS))
def test_each_denied_call_is_one_row_and_the_filter_refuses_it_with_its_errno(machine):
    arch, numbers = policy.SYSCALLS[machine]
    assert set(policy.SECCOMP_DENIED) <= set(numbers), "a denied call without its number on " + machine
    assert set(policy.SECCOMP_ONLY_WITH_FLAGS) <= set(policy.SECCOMP_DENIED)
    prog = confine._seccomp_program(arch, numbers)
    for name, errno in policy.SECCOMP_DENIED.items():
        flags = policy.SECCOMP_ONLY_WITH_FLAGS.get(name, 0)
        assert run_filter(prog, arch, numbers[name], flags) == SECCOMP_RET_ERRNO | errno, name
        if flags:  # refused for the flag, not for the call
            assert run_filter(prog, arch, numbers[name], flags ^ 0xFFFFFFFF) == SECCOMP_RET_ALLOW, name
    others = set(range(500)) - {numbers[name] for name in policy.SECCOMP_DENIED}
    assert all(run_filter(prog, arch, nr, 0xFFFFFFFF) == SECCOMP_RET_ALLOW for nr in others)
    # another ABI (i386 beside x86-64, say), or x32's numbers, goes nowhere around the filter
    assert run_filter(prog, arch ^ 1, 39) == SECCOMP_RET_ERRNO | 1
    assert run_filter(prog, arch, 0x40000000 | 39) == SECCOMP_RET_ERRNO | 1


def test_the_bubblewrap_command_is_the_table_and_only_the_jobs_folder_is_writable(tmp_path):
    cmd = worker_start._bwrap_command("bwrap", tmp_path)
    assert cmd[:1 + len(policy.UNSHARE)] == ["bwrap", *(f"--unshare-{ns}" for ns in policy.UNSHARE)]
    pairs = [(cmd[i], cmd[i + 1]) for i in range(len(cmd) - 1)]
    for bind in policy.BINDS:
        if bind.kind == "library":
            for d in worker_start._library_dirs():
                assert ("--ro-bind", str(d)) in pairs
        elif bind.kind == "host-top":
            assert (not Path(bind.path).exists() or bind.path in cmd), bind
        else:
            assert bind.path in cmd, bind
    assert cmd.count("--bind") == 1 and cmd[cmd.index("--bind") + 1:][:2] == [str(tmp_path), policy.JOBS]
    worker = cmd.index(policy.INSIDE_WORKER)
    assert cmd[worker - 2:worker] == ["--ro-bind", str(worker_start.WORKER)]
    assert cmd[-1] == "--clearenv"
