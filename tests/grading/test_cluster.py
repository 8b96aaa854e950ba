"""Grading on a real Dask cluster: a scheduler and two single-threaded workers started with Dask's own command
line, TLS with the course's certificates, each worker in its own folder running the grader installed there.
The same scores as the local pool; a worker whose course differs, or a client without the certificate, is
refused; a worker killed mid-batch costs nobody their score."""

from __future__ import annotations

import socket
import ssl
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers.course import CASES as CASES_DIR
from tests.helpers.course import CHAPTER, REPO, fixture_course, submit, submit_case
from tests.helpers.dask_cluster import Cluster

pytestmark = pytest.mark.grading
distributed = pytest.importorskip("distributed")
CASES = ["honest-correct", "one-wrong", "infinite-loop"]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from grader.cluster import make_certs

    folder = tmp_path_factory.mktemp("certs") / "course"
    make_certs(folder)
    return folder


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, certs):
    c = Cluster(tmp_path_factory.mktemp("cluster"), certs)
    try:
        c.add_worker("w1")
        c.add_worker("w2")
        c.wait_for(2)
        yield c
    finally:
        c.close()


def _grade(root, **kw):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.sandbox import Limits

    recs = autograde(Course(root), CHAPTER, limits=Limits(cell_timeout=2, budget=30), progress=False, seed=1234, **kw)
    return recs, {s: [(e["grade_id"], e["score"], e["status"]) for e in r["exercises"]] for s, r in recs.items()}


def _grader(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def on_local(tmp_path_factory):
    root = fixture_course(tmp_path_factory.mktemp("local"))
    for case in CASES:
        submit_case(root, case)
    return _grade(root, workers=1)[1]


def test_each_worker_runs_the_course_installed_there(cluster, certs):
    from grader.cluster import connect, installed, worker_identity

    with connect(cluster.address, str(certs)) as client:
        said = client.run(worker_identity)
        names = {a: w["name"] for a, w in client.scheduler_info(n_workers=-1)["workers"].items()}
    assert {names[a]: s["where"] for a, s in said.items()} == {
        w: str(cluster.base / w / "install") for w in ("w1", "w2")}
    ours = installed()
    assert all(s["commit"] == ours["commit"] and s["lock"] == ours["lock"] and s["code"] == ours["code"]
               for s in said.values())
    out = _grader("cluster-check", cluster.address, "--certs", str(certs))
    assert out.returncode == 0 and "2 workers" in out.stdout, out.stderr


def test_the_cluster_gives_the_local_pools_scores(cluster, certs, tmp_path, on_local):
    root = fixture_course(tmp_path)
    for case in CASES:
        submit_case(root, case)
    recs, scores = _grade(root, scheduler=cluster.address, certs=str(certs))
    assert scores == on_local and not recs.not_recorded and not recs.graded_in_part


def test_a_worker_of_another_commit_is_refused_by_name_before_any_job(cluster, certs, tmp_path):
    cluster.add_worker("stale", commit="0" * 40)
    try:
        cluster.wait_for(3)
        out = _grader("cluster-check", cluster.address, "--certs", str(certs))
        assert out.returncode == 1 and "worker stale" in out.stderr and "course commit 000000000000" in out.stderr
        root = fixture_course(tmp_path)
        submit_case(root, "honest-correct")
        out = _grader("--root", str(root), "autograde", CHAPTER, "--scheduler", cluster.address, "--certs", str(certs))
        assert out.returncode == 1, out.stderr
        assert "worker stale" in out.stderr and "w1" not in out.stderr, out.stderr
        assert not list((root / "autograded").glob("*/*/.torchcourse-grade.json"))
    finally:
        cluster.kill("stale")


def test_a_scheduler_that_reruns_a_job_whose_worker_died_is_refused(certs, tmp_path):
    """Dask's default reruns such a job three times on other workers before the grader hears of it: refused
    by name, by cluster-check and by autograde, before any job."""
    (tmp_path / "default").mkdir()
    default = Cluster(tmp_path / "default", certs, allowed_failures=None)
    try:
        out = _grader("cluster-check", default.address, "--certs", str(certs))
        assert out.returncode == 1 and "allowed-failures" in out.stderr and "3 times" in out.stderr, out.stderr
        root = fixture_course(tmp_path / "course")
        submit_case(root, "honest-correct")
        out = _grader("--root", str(root), "autograde", CHAPTER, "--scheduler", default.address, "--certs", str(certs))
        assert out.returncode == 1 and "ALLOWED_FAILURES=0" in out.stderr, out.stderr
        assert not list((root / "autograded").glob("*/*/.torchcourse-grade.json"))
    finally:
        default.close()


def test_no_cluster_without_tls_and_the_course_certificate(cluster, certs, tmp_path):
    from distributed import Client
    from distributed.security import Security

    from grader.cluster import make_certs

    root = fixture_course(tmp_path / "course")
    submit_case(root, "honest-correct")
    plain = "tcp://" + cluster.address.removeprefix("tls://")
    out = _grader("--root", str(root), "autograde", CHAPTER, "--scheduler", plain, "--certs", str(certs))
    assert out.returncode == 1 and "only tls://" in out.stderr, out.stderr
    out = _grader("--root", str(root), "autograde", CHAPTER, "--scheduler", cluster.address)
    assert out.returncode == 1 and "--certs" in out.stderr, out.stderr
    # A client of another authority's certificate never reaches the scheduler: no task runs.
    other = tmp_path / "other"
    make_certs(other)
    ran = tmp_path / "ran"
    stranger = Security(tls_ca_file=str(other / "ca.pem"), tls_client_cert=str(other / "client.pem"),
                        tls_client_key=str(other / "client.key"), require_encryption=True)
    with pytest.raises((OSError, TimeoutError)):
        with Client(cluster.address, security=stranger, timeout="3s") as client:
            client.submit(ran.touch).result()
    assert not ran.exists()
    # Nor does one that trusts the scheduler but has no certificate: the scheduler ends the handshake.
    host, port = cluster.address.removeprefix("tls://").rsplit(":", 1)
    ctx = ssl.create_default_context(cafile=str(certs / "ca.pem"))
    ctx.check_hostname = False
    with socket.create_connection((host, int(port)), timeout=5) as raw:
        with pytest.raises((ssl.SSLError, ConnectionResetError)):
            with ctx.wrap_socket(raw) as tls:
                tls.sendall(b"\0" * 8)
                tls.recv(1)
    ctx.load_cert_chain(str(certs / "client.pem"), str(certs / "client.key"))  # the same, with it: let in
    with socket.create_connection((host, int(port)), timeout=5) as raw, ctx.wrap_socket(raw) as tls:
        assert tls.version() is not None


def _batch(root, n):
    students = []
    for k in range(n):  # the infinite loops wait on a 2-second cell timeout: the batch lasts long enough to land in
        case = CASES[k % len(CASES)]
        students.append(f"{case}-{k}")
        submit(root, students[-1], {"a-basics.ipynb": CASES_DIR / f"{case}.ipynb",
                                    "b-more.ipynb": CASES_DIR / "correct-b-more.ipynb"})
    return students


def _when_recorded(root, n, then, timeout=240):
    """Call `then` once `n` students are recorded (from a thread beside the grading)."""
    def watch():
        deadline = time.monotonic() + timeout
        while len(list((root / "autograded").glob("*/*/.torchcourse-grade.json"))) < n:
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
        then()

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def _case(student):
    return student.rsplit("-", 1)[0]


def test_a_job_that_kills_its_sandbox_worker_on_the_cluster_is_recorded_after_one_retry(cluster, certs, tmp_path,
                                                                                       on_local):
    import nbformat

    from tests.grading.test_records import HONEST, Killer, _kill_cell

    root = fixture_course(tmp_path)
    nb = nbformat.read(str(HONEST), as_version=4)
    nb.cells.insert(1, _kill_cell("tc-kill-always"))
    nbformat.write(nb, str(tmp_path / "killer.ipynb"))
    submit(root, "killed-always", {"a-basics.ipynb": tmp_path / "killer.ipynb",
                                   "b-more.ipynb": CASES_DIR / "correct-b-more.ipynb"})
    submit_case(root, "honest-correct")
    killer = Killer({cluster.procs["w1"].pid, cluster.procs["w2"].pid})
    try:
        recs, scores = _grade(root, scheduler=cluster.address, certs=str(certs))
    finally:
        killer.stop.set()
        killer.thread.join()
    assert killer.killed == ["tc-kill-always", "tc-kill-always"], killer.killed  # the job, and its one retry
    assert list(recs["killed-always"]["grader_errors"]) == ["a-basics"]
    assert "worker_died" in " ".join(recs["killed-always"]["flags"]), recs["killed-always"]["flags"]
    assert list(recs.graded_in_part) == ["killed-always"] and not recs.not_recorded
    assert scores["honest-correct"] == on_local["honest-correct"]


def test_a_worker_killed_mid_batch_costs_nobody_their_score(cluster, certs, tmp_path, on_local):
    root = fixture_course(tmp_path)
    students = _batch(root, 6)
    watcher = _when_recorded(root, 1, lambda: cluster.kill("w2"))
    recs, scores = _grade(root, scheduler=cluster.address, certs=str(certs))
    watcher.join()
    assert "w2" not in cluster.procs, "the kill did not land"
    assert sorted(scores) == sorted(students) and not recs.not_recorded and not recs.graded_in_part, recs.not_recorded
    assert {s: scores[s] for s in students} == {s: on_local[_case(s)] for s in students}


def test_the_scheduler_lost_mid_batch_says_so_and_a_rerun_grades_the_rest(cluster, certs, tmp_path, on_local):
    root = fixture_course(tmp_path)
    students = _batch(root, 6)
    watcher = _when_recorded(root, 1, lambda: cluster.kill("scheduler"))
    out = _grader("--root", str(root), "autograde", CHAPTER, "--scheduler", cluster.address, "--certs", str(certs),
                  "--cell-timeout", "2")
    watcher.join()
    assert out.returncode == 1, out.stderr
    lost = [line for line in out.stderr.splitlines() if "scheduler" in line]
    assert len(lost) == 1 and "lost" in lost[0] and "run autograde again" in lost[0], out.stderr
    first = {p.parts[-3] for p in (root / "autograded").glob("*/*/.torchcourse-grade.json")}
    assert 1 <= len(first) < len(students), first
    recs, scores = _grade(root, workers=1)  # a plain rerun, here on the local pool, grades only the rest
    assert sorted(recs) == sorted(set(students) - first)
    assert {s: scores[s] for s in recs} == {s: on_local[_case(s)] for s in recs}
