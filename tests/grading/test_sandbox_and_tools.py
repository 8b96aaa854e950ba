"""The sandbox's walls, probed from inside; the learner's `check`; `release` refusing leaks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.helpers.course import CASES, REPO, fixture_course, install_config

pytestmark = pytest.mark.grading

PROBE = [
    "import os, socket\nprint('uid', os.getuid(), os.getgid())",
    "caps = [l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1]\nprint('caps', caps)",
    f"print('repo-secrets', [p for p in ('{REPO}/solutions', '{REPO}/gradebook.db', '{REPO}/submitted', "
    f"'/root', '/srv/nbgrader') if os.path.exists(p)])",
    f"try:\n    open('{sys.prefix}/pyvenv.cfg', 'a')\n    print('venv writable')\nexcept OSError as e:\n"
    f"    print('venv read-only', type(e).__name__)",
    "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
    "print('umount', libc.umount2(b'/usr', 2), ctypes.get_errno())",
    "try:\n    os.kill(1, 9)\n    print('kill ok')\nexcept OSError as e:\n    print('kill refused', type(e).__name__)",
    "import resource\n"
    "print('limits', resource.getrlimit(resource.RLIMIT_NPROC), resource.getrlimit(resource.RLIMIT_AS)[0] > 0)",
    "print('env', sorted(os.environ))",
    "for d in ('/tmp', '/dev/shm', '/jobs'):\n    try:\n        open(d + '/left-behind', 'w').write('x')\n"
    "        print('wrote', d)\n    except OSError as e:\n        print('cannot write', d)",
    "import torch\nprint('torch', torch.ones(2).sum().item())",
    # what the job holds beyond 0-2: its stdin, its output's reader, the grader's two pipes, and the socket on
    # which the checker process asks for the learner's values; nothing of the worker
    "held = []\nfor fd in os.listdir('/proc/self/fd'):\n    try:\n        t = os.readlink('/proc/self/fd/' + fd)\n"
    "    except OSError:\n        continue  # listdir's own descriptor\n    if int(fd) > 2:\n"
    "        held.append('pipe' if t.startswith('pipe:') else t.rsplit('/', 1)[-1])\nprint('fds', sorted(held))",
]


@pytest.fixture(scope="module")
def probe():
    from grader.sandbox import Limits, SandboxWorker

    with SandboxWorker(Limits(cell_timeout=10, budget=30)) as w:
        raw = w.run(PROBE, seed=1)
    return "\n".join(o.get("text", "") for i in sorted(raw.cells) for o in raw.cells[i].outputs)


def test_sandbox_walls(probe, sandbox_facilities):
    assert "torch 2.0" in probe
    assert re.search(r"fds \['null', 'pipe', 'pipe', 'raw.out', 'socket:\[\d+\]'\]", probe), probe
    assert "env ['HOME', 'MPLBACKEND', 'PATH', 'PYTHONDONTWRITEBYTECODE', 'TMPDIR', 'USER']" in probe
    if not sandbox_facilities.drop_uid:
        pytest.skip("cannot drop to an unprivileged uid here: " + "; ".join(sandbox_facilities.missing))
    assert "uid 0" not in probe and "caps 0000000000000000" in probe
    assert "venv read-only" in probe and "kill refused" in probe
    assert "umount -1" in probe
    assert "limits (64, 64) True" in probe
    if not sandbox_facilities.bwrap:
        pytest.skip("bubblewrap unavailable, the filesystem is not hidden: " + "; ".join(sandbox_facilities.missing))
    assert "repo-secrets []" in probe
    assert "wrote /tmp" not in probe and "wrote /jobs" not in probe


def test_learner_check(tmp_path):
    shutil.copy(CASES / "one-wrong.ipynb", tmp_path / "a.ipynb")
    done = subprocess.run([sys.executable, "-m", "grader", "check", str(tmp_path / "a.ipynb")], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("FAIL  fx-double: CheckFailed: double(torch.tensor([1.0, 2.0])) returned "
                               "a torch.Tensor of dtype torch.float32 tensor([3., 6.])")
    assert lines[1] == ("Difference: 2 element(s) differ; the first at index 0: got 3.0, expected 2.0; "
                        "largest difference 2")
    assert lines[2] == "PASS  fx-strides: passed"
    assert "graded checks include more cases" in done.stdout


def test_release_refuses_leaks(tmp_path):
    from grader.course import Course
    from grader.release import LeakError, release

    root = fixture_course(tmp_path)
    install_config(root)
    assert release(Course(root), ["01-tensors"]) == ["01-tensors"]
    released = (root / "chapters" / "01-tensors" / "a-basics.ipynb").read_text()
    assert "HIDDEN" not in released and "step *= n" not in released
    (root / "book").mkdir()
    (root / "book" / "hints.md").write_text("# Hints\n\n    got = call(contiguous_strides, shape)\n")
    with pytest.raises(LeakError, match="book/hints.md"):
        release(Course(root), ["01-tensors"])
    (root / "book" / "hints.md").unlink()
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/index\nchapters:\n"
                                   "- file: solutions/01-tensors/a-basics\n")
    with pytest.raises(LeakError, match="_toc.yml"):
        release(Course(root), ["01-tensors"])


def test_course_under_a_private_folder(tmp_path):
    """CI clones into `mktemp -d` (mode 0700): the sandbox must still let its unprivileged uid import torch.

    The repository is bind-mounted below a 0700 folder inside a private mount namespace, and the
    grader is run from there, as a CI runner would run it.
    """
    from grader.sandbox import facilities

    if not facilities().bwrap:
        pytest.skip("needs bubblewrap; missing here: " + "; ".join(facilities().missing))
    private = tmp_path / "private"
    (private / "repo").mkdir(parents=True)
    private.chmod(0o700)
    script = (f"mount --bind {REPO} {private}/repo && cd {private}/repo && "
              f"{private}/repo/.venv/bin/python -c \"{PRIVATE_PROBE}\"")
    done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script],
                          capture_output=True, text=True, timeout=300)
    if "mount:" in done.stderr and done.returncode != 0:
        pytest.skip("cannot bind-mount here: " + done.stderr.strip()[:200])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "prefix-under-private True" in done.stdout
    assert "uid-dropped True" in done.stdout and "torch-ok 2.0" in done.stdout, done.stdout + done.stderr


PRIVATE_PROBE = (
    "import sys; from grader.sandbox import SandboxWorker, Limits, facilities; "
    "print('prefix-under-private', '/private/' in sys.prefix); "
    "w = SandboxWorker(Limits(cell_timeout=20, budget=60)); "
    "r = w.run(['import os, torch', 'print(\\\"uid-dropped\\\", os.getuid() != 0)', "
    "'print(\\\"torch-ok\\\", torch.ones(2).sum().item())'], seed=1); w.close(); "
    "print(''.join(o.get('text', '') for i in sorted(r.cells) for o in r.cells[i].outputs)); "
    "print(facilities().missing)"
)


def test_without_bubblewrap_the_cli_says_so_and_still_grades(tmp_path):
    """With bubblewrap out of reach (not on PATH), autograde warns visibly and grades in the fallback sandbox."""
    import json
    import os

    from tests.helpers.course import submit_case

    root = fixture_course(tmp_path)
    for case in ("honest-correct", "one-wrong"):
        submit_case(root, case)
    env = {**os.environ, "PATH": "/nonexistent"}
    done = subprocess.run([sys.executable, "-m", "grader", "--root", str(root), "autograde", "--cell-timeout", "10"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "SandboxWarning: sandbox: bubblewrap" in done.stderr and "is unavailable" in done.stderr
    scores = {p.parent.parent.name: json.loads(p.read_text())["score"]
              for p in root.glob("autograded/*/01-tensors/.torchcourse-grade.json")}
    assert scores == {"honest-correct": 6.0, "one-wrong": 4.0}


def test_chapter_data_files_reach_the_sandbox(tmp_path):
    """A chapter's data files sit beside the cells, as nbgrader puts them beside an autograded notebook."""
    import nbformat

    from grader.autograde import autograde
    from grader.course import Course
    from tests.helpers.course import submit

    root = fixture_course(tmp_path)
    (root / "solutions" / "01-tensors" / "table.csv").write_text("a,b\n1,2\n")
    nb = nbformat.read(str(CASES / "honest-correct.ipynb"), as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell("print('DATA', open('table.csv').read().split())"))
    nbformat.write(nb, str(tmp_path / "with-data.ipynb"))
    submit(root, "reader", {"a-basics.ipynb": tmp_path / "with-data.ipynb",
                            "b-more.ipynb": CASES / "correct-b-more.ipynb"})
    records = autograde(Course(root), "01-tensors", workers=1, progress=False)
    assert records["reader"]["score"] == 6
    out = nbformat.read(str(root / "autograded" / "reader" / "01-tensors" / "a-basics.ipynb"), as_version=4)
    assert "DATA ['a,b', '1,2']" in out.cells[-1].outputs[0]["text"]


def test_feedback_never_shows_hidden_tests(tmp_path):
    """Learner code that reads the hidden cell calling it (through its caller's frame) is tampering: scored 0
    and flagged; its feedback page shows nothing learner code printed once hidden code had run."""
    import nbformat

    from grader.autograde import autograde
    from grader.course import Course
    from grader.feedback import feedback
    from tests.helpers.course import submit, submit_case

    root = fixture_course(tmp_path)
    nb = nbformat.read(str(CASES / "honest-correct.ipynb"), as_version=4)
    for c in nb.cells:
        if c.metadata.get("nbgrader", {}).get("grade_id") == "fx-double-answer":
            c.source = ("import sys, linecache\ndef double(t):\n"
                        "    print(''.join(linecache.getlines(sys._getframe(1).f_code.co_filename)))\n"
                        "    return t * 2\n")
    nbformat.write(nb, str(tmp_path / "snoop.ipynb"))
    submit(root, "snoop", {"a-basics.ipynb": tmp_path / "snoop.ipynb", "b-more.ipynb": CASES / "correct-b-more.ipynb"})
    submit_case(root, "honest-correct")
    records = autograde(Course(root), "01-tensors", workers=1, progress=False)
    assert records["snoop"]["score"] == 1 and "sys._getframe" in " ".join(records["snoop"]["flags"])
    pages = feedback(Course(root), "01-tensors")
    names = sorted(str(p.relative_to(root / "feedback")) for p in pages)
    assert names == ["honest-correct/01-tensors/a-basics.html", "honest-correct/01-tensors/b-more.html",
                     "snoop/01-tensors/a-basics.html", "snoop/01-tensors/b-more.html"]
    page = (root / "feedback" / "snoop" / "01-tensors" / "a-basics.html").read_text()
    assert 'rng("fx-double")' not in page and "BEGIN HIDDEN" not in page


def test_memory_of_all_a_submissions_processes_is_capped(sandbox_facilities):
    """Each process is under RLIMIT_AS; with cgroups the total is capped too: 8 x 400 MB children, 1 GiB cap."""
    if not sandbox_facilities.cgroups:
        pytest.skip("no cgroup memory controller, so this would use 3 GB of the host: "
                    + "; ".join(sandbox_facilities.missing))
    from grader.sandbox import Limits, SandboxWorker

    bomb = ("import os, time\nkids = []\nfor i in range(8):\n    pid = os.fork()\n    if pid == 0:\n"
            "        x = b'x' * (400 * 2**20)\n        time.sleep(3)\n        os._exit(0)\n    kids.append(pid)\n"
            "print('killed', sum(os.waitpid(k, 0)[1] == 9 for k in kids))")
    with SandboxWorker(Limits(mem_mb=512, cell_timeout=60, budget=90)) as w:
        raw = w.run([bomb, "print('still here')"], seed=1)
        assert w.alive()
        peak = int((w.cgroups.dirs[0] / "memory.max_usage_in_bytes").read_text())
    text = "".join(o.get("text", "") for i in sorted(raw.cells) for o in raw.cells[i].outputs)
    assert "still here" in text
    killed = int(text.split("killed")[1].split()[0])
    assert killed >= 4, text
    assert peak <= (512 + 512) * 2**20


def test_a_worker_restarted_by_a_pools_job_thread_outlives_that_thread():
    """bubblewrap's --die-with-parent watches the thread that started it: a worker killed from outside and
    restarted for the next job, from one of `run`'s job threads, must still be there for the run after."""
    from grader.pools import Job, LocalPool
    from grader.sandbox import Limits

    pool = LocalPool(1, Limits(cell_timeout=20, budget=60))
    job = Job(("s", "nb"), ["print('ran')"], 1, [])
    try:
        worker = pool.all[0]
        worker.proc.kill()
        worker.proc.wait()
        assert [raw.status for _, raw in pool.run([job])] == ["exited"]  # restarted in a job thread
        restarted = worker.proc.pid
        assert [raw.status for _, raw in pool.run([job])] == ["exited"]  # that thread has ended
        assert worker.proc.pid == restarted, "the job ran only because the worker was started once more"
    finally:
        pool.close()


def test_each_worker_keeps_to_a_cpu_of_its_own_and_so_do_its_jobs_when_every_cpu_has_a_worker(sandbox_facilities):
    """A pool's worker processes run on one CPU each (a cell's hand-over to the worker then rarely wakes
    another CPU). When every CPU has its worker, a job's processes keep to their worker's CPU too (another
    would be taken from another worker's job); a template's opening, the release's own cells, gets every CPU,
    and with fewer workers than CPUs so does every job, as the lesson would in Jupyter."""
    from grader.pools import LocalPool
    from grader.sandbox import Limits

    everything = sorted(os.sched_getaffinity(0))
    if len(everything) < 2:
        pytest.skip("one CPU here: nothing to keep apart")
    cell = ("import json, os\n"
            "print(json.dumps([sorted(os.sched_getaffinity(0)), sorted(os.sched_getaffinity(os.getppid()))]))")
    limits = Limits(cell_timeout=20, budget=60)

    def seen(pool, prefix=None):
        runs = [w.run([cell, cell], seed=1, prefix=prefix) for w in pool.all]
        return [[json.loads(raw.cells[i].outputs[0]["text"]) for i in (0, 1)] for raw in runs], runs

    pool = LocalPool(len(everything), limits)
    try:
        full, _ = seen(pool)
        forked, runs = seen(pool, [cell])
    finally:
        pool.close()
    assert [run[0][1] for run in full] == [[cpu] for cpu in everything]  # each worker on its own CPU
    assert [run[0][0] for run in full] == [[cpu] for cpu in everything]  # and its job with it
    if sandbox_facilities.drop_uid and sandbox_facilities.job_ns:  # where jobs can be forked from a template
        assert [raw.prefix.get("how") for raw in runs] == ["forked"] * len(everything)
        assert [run[0][0] for run in forked] == [everything] * len(everything)  # the opening, in the template
        assert [run[1][0] for run in forked] == [[cpu] for cpu in everything]  # the job's own cell

    pool = LocalPool(len(everything) - 1, limits)
    try:
        fewer, _ = seen(pool)
    finally:
        pool.close()
    assert [run[0] for run in fewer] == [[everything, [cpu]] for cpu in everything[:-1]]


def test_a_worker_runs_its_next_job_before_the_last_ones_results_are_read():
    """A pool hands a worker its next job as soon as the worker has answered (`dispatch`), and reads the
    answered job's results (`collect`) meanwhile: each job's results and files stay its own until collected."""
    from grader.sandbox import Limits, SandboxWorker

    with SandboxWorker(Limits(cell_timeout=20, budget=60)) as w:
        first = w.dispatch(["print('first')", "_ = open('mine.txt', 'w').write('1')"], seed=1)
        second = w.dispatch(["import os\nprint('second', os.path.exists('mine.txt'))"], seed=1)
        assert first.outside.exists() and first.results.exists()
        a, b = w.collect(first), w.collect(second)
    assert [c.outputs[0]["text"] for c in a.cells.values() if c.outputs] == ["first\n"]
    assert b.cells[0].outputs[0]["text"] == "second False\n"
    assert not first.outside.exists() and not first.results.exists() and not second.results.exists()
