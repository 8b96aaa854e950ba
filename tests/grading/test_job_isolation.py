"""Each job starts clean and ends clean.

One warm worker grades, in this order, a student who leaves every residue a job can (SysV
shared memory touched so that it is charged, a SysV message queue holding a message, a SysV
semaphore set, POSIX shared memory, a POSIX message queue, keys in the keyrings the kernel keeps
per uid, a loopback port in TIME_WAIT, a background process, temp files until its temp space is
full, and a tmpfs of its own in a user namespace), then a student who answers correctly and
probes for that residue, then an honest student. The honest ones must get full marks, and the
probe must find nothing: IPC and sockets of a job live and die with the job, and so does its temp
space.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from tests.helpers.course import CASES, CHAPTER, fixture_course, submit

pytestmark = pytest.mark.grading

KEY = 0x7C0FFEE
PORT = 40417
TMP_MB = 64

# Run by learner code in the sandbox, in a Python subprocess of its own (ctypes in a notebook cell is itself
# flagged as tampering). Every step reports what it got, so the test can tell what a facility refused.
RESIDUE = f"""
import ctypes, json, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
did = {{}}
shm = libc.shmget({KEY}, 64 << 20, 0o1000 | 0o666)
addr = libc.shmat(shm, None, 0) if shm >= 0 else None
if addr not in (None, ctypes.c_void_p(-1).value):
    ctypes.memset(addr, 0x41, 64 << 20)   # touched: its pages are charged to whoever holds them
    libc.shmdt(ctypes.c_void_p(addr))
did["sysv shm"] = shm
q = libc.msgget({KEY}, 0o1000 | 0o666)
if q >= 0:
    msg = ctypes.create_string_buffer(b"\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x00secret", 14)
    libc.msgsnd(q, msg, 6, 0)
did["sysv msg"] = q
did["sysv sem"] = libc.semget({KEY}, 4, 0o1000 | 0o666)
try:
    with open("/dev/shm/residue", "wb") as f:
        f.write(b"secret" * 1000)
    did["posix shm"] = "written"
except OSError as e:
    did["posix shm"] = str(e)
try:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)
    did["posix mq"] = rt.mq_open(b"/residue", os.O_CREAT | os.O_RDWR, 0o666, None)
except OSError as e:
    did["posix mq"] = str(e)
try:
    subprocess.Popen(["sleep", "300"], start_new_session=True, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
    did["background"] = "started"
except OSError as e:
    did["background"] = str(e)
# Keys in the keyrings the kernel keeps per uid (the next job runs as the same uid): the user and
# user-session keyrings and the persistent one (keyctl 22), which all outlive the job's processes; then the
# user keyring made read-only (keyctl 5), so that nothing without CAP_SYS_ADMIN could empty it after the job.
sys_add_key, sys_keyctl = {{"x86_64": (248, 250), "aarch64": (217, 219)}}.get(os.uname().machine, (-1, -1))
persistent = libc.syscall(sys_keyctl, 22, -1, -3)
for name, ring in (("u", -4), ("us", -5), ("p", persistent)):
    did["key " + name] = libc.syscall(sys_add_key, b"user", b"residue-" + name.encode(), b"secret", 6, ring)
did["keyring read-only"] = libc.syscall(sys_keyctl, 5, -4, 0x0B0B0000)   # view, read, search
# A loopback port left in TIME_WAIT (its side closed first): the kernel keeps it for a minute.
import socket
try:
    srv = socket.create_server(("127.0.0.1", {PORT}))
    client = socket.create_connection(("127.0.0.1", {PORT}))
    conn, _ = srv.accept()
    conn.close(), client.recv(1), client.close(), srv.close()
    did["time-wait"] = "made"
except OSError as e:
    did["time-wait"] = str(e)
# A temp space of its own beyond its limit: a tmpfs mounted in a user namespace of the job's making.
try:
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                           "mkdir own && mount -t tmpfs -o size=512m none own && head -c 50000000 /dev/zero > own/a "
                           "&& head -c 50000000 /dev/zero > own/b && echo filled"],   # 100 MB, > TMP_MB
                          capture_output=True, text=True, timeout=60)
    did["own tmpfs"] = (done.stdout + done.stderr).strip()[-300:]
except OSError as e:
    did["own tmpfs"] = str(e)
with open("note.txt", "w") as f:
    f.write("secret")
written = 0
for i in range(40):                       # 640 MB at most, in files under the per-file limit
    try:
        with open(f"fill-{{i}}.bin", "wb") as f:
            for _ in range(16):
                f.write(b"x" * (1 << 20))
                written += 1 << 20
    except OSError as e:
        did["fill"] = f"{{written >> 20}} MB, then {{e.strerror}}"
        break
else:
    did["fill"] = f"{{written >> 20}} MB"
print("RESIDUE " + json.dumps(did))
"""

PROBE = f"""
import ctypes, os, json
libc = ctypes.CDLL(None, use_errno=True)
seen = {{}}
for kind in ("shm", "msg", "sem"):
    try:
        with open(f"/proc/sysvipc/{{kind}}") as f:
            seen[f"sysv {{kind}} listed"] = f.read().splitlines()[1:]
    except OSError as e:
        seen[f"sysv {{kind}} listed"] = str(e)
seen["sysv shm by key"] = libc.shmget({KEY}, 0, 0)
seen["sysv msg by key"] = libc.msgget({KEY}, 0)
seen["sysv sem by key"] = libc.semget({KEY}, 0, 0)
rt = ctypes.CDLL("librt.so.1", use_errno=True)
seen["posix mq"] = rt.mq_open(b"/residue", os.O_RDONLY, 0, None)
seen["dev shm"] = sorted(os.listdir("/dev/shm"))
seen["here"] = sorted(n for n in os.listdir(".") if n.startswith(("fill-", "note")))
seen["tmp"] = sorted(n for n in os.listdir(os.environ.get("TMPDIR", "/tmp")) if n.startswith(("fill-", "note")))
sys_keyctl = {{"x86_64": 250, "aarch64": 219}}.get(os.uname().machine, -1)
persistent = libc.syscall(sys_keyctl, 22, -1, -3)
for name, ring in (("u", -4), ("us", -5), ("p", persistent)):
    seen["key " + name] = libc.syscall(sys_keyctl, 10, ring, b"user", b"residue-" + name.encode(), 0)  # SEARCH
listed = (ctypes.c_int32 * 64)()
seen["user keyring links"] = libc.syscall(sys_keyctl, 11, -4, listed, 256) // 4   # READ: its links
import socket
try:
    probe = socket.socket()   # no SO_REUSEADDR: a port in TIME_WAIT is refused
    probe.bind(("127.0.0.1", {PORT}))
    probe.close()
    seen["port"] = "free"
except OSError as e:
    seen["port"] = e.strerror
st = os.statvfs(".")
seen["free MB"] = st.f_bavail * st.f_frsize >> 20
me = os.getuid()
others = []
for p in os.listdir("/proc"):
    if p.isdigit() and int(p) not in (os.getpid(), os.getppid()):
        try:
            with open(f"/proc/{{p}}/status") as f:
                status = dict(line.split(":", 1) for line in f if ":" in line)
            uid, state = int(status["Uid"].split()[0]), status["State"].split()[0]
        except (OSError, KeyError, ValueError):
            continue
        if uid == me and state != "Z":   # a zombie runs nothing and holds nothing but its pid
            others.append(p + " " + state)
seen["processes of my uid"] = others
print("PROBE " + json.dumps(seen))
"""


def _with_cell(source: str) -> nbformat.NotebookNode:
    """The honest, correct a-basics notebook with one extra code cell of the learner's after its first."""
    nb = nbformat.read(str(CASES / "honest-correct.ipynb"), as_version=4)
    first = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
    cell = (f"import subprocess, sys\ndone = subprocess.run([sys.executable, '-c', {source!r}], capture_output=True, "
            "text=True, timeout=120)\nprint(done.stdout, done.stderr[-2000:])")
    nb.cells.insert(first + 1, nbformat.v4.new_code_cell(cell))
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    from grader.autograde import autograde
    from grader.course import Course
    from grader.sandbox import Limits

    tmp = tmp_path_factory.mktemp("isolation")
    root = fixture_course(tmp)
    (root / "gradebook.db").touch()
    b_ok = CASES / "correct-b-more.ipynb"
    for student, source in (("a-residue", RESIDUE), ("b-probe", PROBE)):
        path = tmp / f"{student}.ipynb"
        nbformat.write(_with_cell(source), str(path))
        submit(root, student, {"a-basics.ipynb": path, "b-more.ipynb": b_ok})
    submit(root, "c-honest", {"a-basics.ipynb": CASES / "honest-correct.ipynb", "b-more.ipynb": b_ok})
    course = Course(root)
    # One worker: every job runs in the same warm process, one after the other, in student order.
    records = autograde(course, CHAPTER, workers=1, limits=Limits(cell_timeout=20, budget=60, mem_mb=1024,
                                                                   tmp_mb=TMP_MB), progress=False)
    return course, records


def _printed(course, student: str, tag: str) -> dict:
    nb = nbformat.read(str(course.autograded / student / CHAPTER / "a-basics.ipynb"), as_version=4)
    text = "\n".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    line = next((x for x in text.splitlines() if x.startswith(tag + " ")), None)
    assert line is not None, f"no {tag} line in {student}'s outputs:\n{text[-3000:]}"
    return json.loads(line[len(tag) + 1:])


def test_honest_students_after_a_residue_get_full_marks(graded):
    course, records = graded
    for student in ("b-probe", "c-honest"):
        rec = records[student]
        assert rec["score"] == rec["max_score"] == 6, json.dumps(rec, indent=1)
        assert not rec["flags"] and not rec["grader_errors"], rec["flags"]


def test_the_residue_was_made_and_the_filler_is_recorded(graded, sandbox_facilities):
    course, records = graded
    did = _printed(course, "a-residue", "RESIDUE")
    assert did["sysv shm"] >= 0 and did["sysv msg"] >= 0 and did["sysv sem"] >= 0, did
    assert did["background"] == "started", did
    assert did["time-wait"] == "made", did
    if sandbox_facilities.drop_uid:   # learner code gets no keyring: they are kept per uid, not per job
        assert did["key u"] == did["key us"] == did["key p"] == -1, did
    rec = records["a-residue"]
    assert rec["score"] == rec["max_score"] == 6, json.dumps(rec, indent=1)   # its own answers still count
    assert not rec["grader_errors"], rec["grader_errors"]
    if sandbox_facilities.drop_uid:   # no user namespace of its own, so no mount of its own either
        assert "filled" not in did["own tmpfs"], did
    if "per-job" in " ".join(sandbox_facilities.missing):
        pytest.skip("no per-job temp space here: " + "; ".join(sandbox_facilities.missing))
    assert did["fill"].endswith("then No space left on device"), did
    assert any(f"temp space ({TMP_MB} MB) was full" in f for f in rec["flags"]), rec["flags"]


def test_nothing_of_the_residue_reaches_the_next_job(graded, sandbox_facilities):
    course, records = graded
    seen = _printed(course, "b-probe", "PROBE")
    assert seen["processes of my uid"] == [], seen
    assert seen["here"] == [] and seen["tmp"] == [], seen
    assert "residue" not in seen["dev shm"], seen
    assert seen["port"] == "free", seen   # the network namespace is the job's, not the worker's
    assert seen["key u"] == seen["key us"] == seen["key p"] == -1, seen   # kept per uid, not per job
    assert seen["user keyring links"] <= 0, seen
    if "per-job" in " ".join(sandbox_facilities.missing):
        pytest.skip("no per-job IPC namespace here: " + "; ".join(sandbox_facilities.missing))
    for kind in ("shm", "msg", "sem"):
        assert seen[f"sysv {kind} listed"] == [], seen
        assert seen[f"sysv {kind} by key"] == -1, seen
    assert seen["posix mq"] == -1, seen
    assert seen["free MB"] >= TMP_MB - 8, seen   # a fresh temp space, not the filler's


# The job before, as a pool leaves it: answered, its folder not yet removed (a pool removes it while the next
# job runs). Its folder outside its temp space has a predictable name, and the next job runs as the same uid.
ENTER_LAST = """
import os
last = "/jobs/j1"
try:
    os.chdir(last)
    print("entered", sorted(os.listdir(".")))
    with open("escaped.bin", "wb") as f:
        f.write(b"x" * (1 << 20))
    print("wrote outside its temp space")
except OSError as e:
    print("refused", e.strerror)
"""


def test_a_job_cannot_enter_the_folder_of_the_job_before(sandbox_facilities):
    from grader.sandbox import Limits, SandboxWorker

    if not sandbox_facilities.drop_uid:
        pytest.skip("no uid of its own for a job here: " + "; ".join(sandbox_facilities.missing))
    with SandboxWorker(Limits(cell_timeout=10, budget=30)) as w:
        first = w.dispatch(["import subprocess\nsubprocess.run(['echo', 'secret of the job before'])"], seed=1)
        second = w.run([ENTER_LAST], seed=2)
        w.collect(first)
    text = "".join(o.get("text", "") for o in second.cells[0].outputs)
    assert text.startswith("refused"), text


def test_a_job_makes_its_temporary_folders_in_its_own_folder(sandbox_facilities):
    """tempfile.mkdtemp() in a cell works and lands in the job's folder (TMPDIR), as in a fresh kernel: the warm
    process chose its temp folder before the job had one, and a job's uid cannot write the sandbox's /tmp."""
    from grader.sandbox import Limits, SandboxWorker

    with SandboxWorker(Limits(cell_timeout=10, budget=30)) as w:
        done = w.run(["import os, tempfile\nmade = tempfile.mkdtemp()\n"
                      "print(made.startswith(os.environ['TMPDIR']), os.path.isdir(made))"], seed=1)
    text = "".join(o.get("text", "") for o in done.cells[0].outputs)
    assert text.strip() == "True True", done.cells[0].outputs
