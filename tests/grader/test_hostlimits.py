"""Host limits on a sandbox worker as a whole: cgroup v2 memory and process caps through a
delegated subtree where there is one, and the OOM-score protection of the worker, each reported by
`facilities()` where the machine does not allow it (never failing without a word)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from grader import hostlimits
from grader.sandbox import facilities


def _can_lower_a_childs_oom_score() -> bool:
    child = subprocess.Popen(["sleep", "5"])
    try:
        Path(f"/proc/{child.pid}/oom_score_adj").write_text("-1000")
        return True
    except OSError:
        return False
    finally:
        child.kill()
        child.wait()


def test_the_oom_protection_is_reported_exactly_when_it_cannot_be_set():
    works = _can_lower_a_childs_oom_score()
    assert hostlimits.oom_adjust_works() is works
    said = [m for m in facilities().missing if "OOM killer" in m]
    assert bool(said) is (not works or os.geteuid() != 0), facilities().missing


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run a probe as another uid")
def test_an_unprivileged_uid_cannot_protect_a_worker_and_the_probe_says_so():
    code = "from grader import hostlimits; print(hostlimits.oom_adjust_works())"
    try:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                              cwd=Path(__file__).resolve().parents[2], user=65534, group=65534, extra_groups=[],
                              env={"PATH": os.environ.get("PATH", "/usr/bin"), "HOME": "/tmp"})
    except PermissionError as exc:  # a checkout inside a private folder (a fresh clone in mktemp -d)
        pytest.skip(f"the environment is not readable by uid 65534: {exc}")
    if done.returncode != 0:
        pytest.skip(f"the environment is not readable by uid 65534: {done.stderr[-300:]}")
    assert done.stdout.strip() == "False"


def test_cgroup_caps_are_v2_where_delegated_else_reported():
    fac = facilities()
    parent = hostlimits.delegated_parent()
    if parent is None and not fac.cgroups:
        assert [m for m in fac.missing if "cgroup v2 delegated to this process" in m], fac.missing
    if parent is None:
        pytest.skip(f"no cgroup v2 subtree with memory and pids delegated here (own cgroup: "
                    f"{hostlimits.own_cgroup()}); v1 caps: {fac.cgroups}")
    child = subprocess.Popen([sys.executable, "-I", "-c", "import sys; sys.stdin.read(); b = bytearray(512 * 2**20)"],
                             stdin=subprocess.PIPE)
    d = hostlimits.create(parent, f"torchcourse-{os.getpid()}-test", 64 * 2**20, 16, [child.pid])
    try:
        assert (d / "memory.max").read_text().strip() == str(64 * 2**20)
        assert str(child.pid) in (d / "cgroup.procs").read_text().split()
        child.stdin.close()
        assert child.wait(timeout=60) != 0  # killed by the cgroup's memory cap
    finally:
        child.kill()
        hostlimits.remove(d)
    assert not d.exists()


# A delegated cgroup v2 subtree as systemd gives one (a scope or service with Delegate=yes) or a container runtime
# does: the controllers are available in the grader's own cgroup, which holds the grader itself. cgroup v2 lets a
# cgroup other than the root hand controllers to its children only while no process is in it.
IN_DELEGATED = """
import json, sys
from grader import hostlimits
hostlimits.CONTROLLERS = tuple(sys.argv[2].split(","))
parent = hostlimits.delegated_parent()
again = hostlimits.delegated_parent()   # asked again (facilities(), then each worker): the same answer
print(json.dumps({"parent": str(parent), "again": str(again), "own": str(hostlimits.own_cgroup())}))
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a cgroup")
def test_a_delegated_cgroup_that_holds_the_grader_is_used():
    top = hostlimits.own_cgroup()
    if top is None or not os.access(top, os.W_OK):
        pytest.skip(f"no writable cgroup v2 here (own cgroup: {top})")
    available = (top / "cgroup.controllers").read_text().split()
    wanted = [c for c in ("memory", "pids", "hugetlb", "io") if c in available][:2]
    if not wanted:
        pytest.skip(f"no domain controller to delegate in {top}")
    control = top / "cgroup.subtree_control"
    before = control.read_text().split()
    try:
        control.write_text(" ".join("+" + c for c in wanted))
    except OSError as exc:
        pytest.skip(f"cannot hand {wanted} to children of {top}: {exc}")
    scope = top / f"torchcourse-{os.getpid()}-delegated"
    scope.mkdir()
    try:
        # The child waits until it is in the delegated cgroup, as a grader started in a systemd scope is.
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.readline(); exec(sys.argv[1])",
                                  IN_DELEGATED, ",".join(wanted)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 text=True, cwd=Path(__file__).resolve().parents[2])
        (scope / "cgroup.procs").write_text(str(child.pid))
        out, _ = child.communicate("go\n", timeout=120)
        seen = __import__("json").loads(out)
        assert seen["parent"] == seen["again"] == str(scope), seen
        assert seen["own"] != str(scope) and Path(seen["own"]).parent == scope, seen   # moved to a leaf
        assert set(wanted) <= set((scope / "cgroup.subtree_control").read_text().split())
    finally:
        for d in sorted((p for p in scope.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            hostlimits.rmdir_when_empty(d)
        hostlimits.rmdir_when_empty(scope)
        try:
            control.write_text(" ".join("-" + c for c in wanted if c not in before))  # as it was
        except OSError:
            pass
