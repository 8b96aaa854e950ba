"""A class on a real JupyterHub (deploy/): set up by deploy/setup-class.sh, real unix users, loopback only.

One module-scoped run: an instructor and two students are created, log in with their passwords (PAM), start
their servers (each runs as its user, on a host of its own: USER.hub.localhost, over https), and go through a
class round: release, fetch, submit, collect, autograde (sandbox, as root through the instructor's sudo rule),
feedback back to the students, export. Then a student attacks: renames or squats the course's folders, submits
as the other student (also dated 2099), reads the instructor's home, the gradebook and the hub's state, reaches
the instructor's formgrader, serves a page with a script to the others (opened in Chromium), uses the hub cookie
her host receives from them, floods the exchange, and from a terminal of her own server reads the others'
processes and floods her /tmp, /dev/shm and home. Each attack is refused, and the honest student's grade is
unchanged. A third student, added with --language zh_CN, takes 02-autograd in Chinese through the same round.

Users, homes, the exchange, the hub and the files setup-class.sh writes in /etc (and the test in /etc/hosts) are
removed afterwards, even when a step fails. Needs root (to create users); skipped with the reason otherwise.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from grader.course import COURSE_ID
from tests.helpers.course import FIXTURES, REPO, grade_points, submission
from torchcourse.contract import chapters

CH = "00-stand-in"
BASE_PYTHON = "/usr/bin/python3.11"
# The grading fixture's two-notebook chapter, as a chapter of its own in the instructor's course: the attacks and
# their regrades run on it (seconds, not minutes). Every real chapter then goes through a round of its own
# (`every_chapter`).
SOLUTIONS = FIXTURES / "course" / "solutions" / "01-tensors"


def _why_not() -> str | None:
    if os.geteuid() != 0:
        return "needs root: it creates unix users, as `make test` does when run as root (CI)"
    if sys.platform != "linux":
        return "a Linux host is needed (unix users, PAM)"
    for tool in ("npm", "runuser", "useradd", "chpasswd", "openssl"):
        if not shutil.which(tool):
            return f"{tool} is missing (tests/setup-system.sh installs what the class needs)"
    if Path(sys.base_prefix).resolve() != Path(BASE_PYTHON).resolve().parent.parent:
        return f"the test environment must be a venv of {BASE_PYTHON} (make setup makes one)"
    return None


pytestmark = [pytest.mark.grading, pytest.mark.skipif(_why_not() is not None, reason=_why_not() or "")]

# Files setup-class.sh writes outside its own folders, put back as they were afterwards.
ETC_FILES = ("/etc/login.defs", "/etc/adduser.conf", "/etc/profile.d/torchcourse.sh", "/etc/sudoers.d/torchcourse",
             "/etc/hosts")


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


@dataclass
class Klass:
    tmp: Path
    prefix: Path
    exchange: Path
    inst: str
    students: tuple[str, str]
    passwords: dict[str, str]
    zh: str  # a third student, added with --language zh_CN: she takes a chapter in Chinese (`chinese_round`)
    base: str
    port: int
    cert: Path
    course: Path = Path()
    times: dict[str, float] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    sessions: dict = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def server(self, user: str) -> str:
        """The URL of a user's server: on a host of its own (USER.hub.localhost), another origin than the hub's."""
        return f"https://{user}.hub.localhost:{self.port}/user/{user}"

    def home(self, user: str) -> Path:
        import pwd

        return Path(pwd.getpwnam(user).pw_dir)

    def run_as(self, user: str, command: str, check: bool = True) -> subprocess.CompletedProcess:
        """A login shell of `user` (PATH and TORCHCOURSE_EXCHANGE from /etc/profile.d/torchcourse.sh)."""
        t = time.monotonic()
        done = subprocess.run(["runuser", "-l", user, "-c", command], capture_output=True, text=True, timeout=600)
        self.log.append(f"$ [{user}] {command} ({time.monotonic() - t:.1f} s)\n{done.stdout}{done.stderr}")
        if check:
            assert done.returncode == 0, f"[{user}] {command}: {done.returncode}\n{done.stdout}\n{done.stderr}"
        return done

    # ---- the hub, over HTTP, as a browser would use it
    def login(self, user: str):
        import requests

        s = requests.Session()
        s.trust_env = False  # REQUESTS_CA_BUNDLE would replace the class's certificate
        s.verify = str(self.cert)
        page = s.get(f"{self.base}/hub/login", timeout=30)
        xsrf = re.search(r'name="_xsrf" value="([^"]+)"', page.text)[1]
        r = s.post(f"{self.base}/hub/login?next=", allow_redirects=False, timeout=60,
                   data={"username": user, "password": self.passwords[user], "_xsrf": xsrf})
        assert r.status_code == 302, f"{user} could not log in: {r.status_code}"
        self.sessions[user] = s
        return s

    def hub_xsrf(self, user: str) -> dict:
        return {"X-XSRFToken": self.sessions[user].cookies.get("_xsrf", path="/hub/")}

    def user_xsrf(self, user: str) -> dict:
        # The server's own _xsrf cookie, on its host (on / there: its cookies are host-only, __Host- with https)
        host = f"{user}.hub.localhost"
        jar = self.sessions[user].cookies
        return {"X-XSRFToken": next(c.value for c in jar if c.name == "_xsrf" and c.domain == host)}

    def action(self, user: str, what: str, chapter: str = "") -> dict:
        """nbgrader's assignment-list extension in the user's own server (what JupyterLab's panel calls)."""
        t = time.monotonic()
        r = self.sessions[user].post(f"{self.server(user)}/assignments/{what}", headers=self.user_xsrf(user),
                                     data={"course_id": COURSE_ID, "assignment_id": chapter or CH}, timeout=300)
        self.log.append(f"POST [{user}] assignments/{what} {chapter or CH} ({time.monotonic() - t:.1f} s): "
                        f"{r.status_code}")
        assert r.status_code == 200, f"{user} {what}: {r.status_code} {r.text[:300]}"
        reply = r.json()
        assert reply.get("success"), f"{user} {what}: {reply}"
        return reply

    def put_notebook(self, user: str, path: str, nb) -> None:
        r = self.sessions[user].put(f"{self.server(user)}/api/contents/{path}", headers=self.user_xsrf(user),
                                    json={"type": "notebook", "format": "json", "content": nb}, timeout=60)
        assert r.status_code in (200, 201), f"{user} PUT {path}: {r.status_code} {r.text[:300]}"


def _kill_processes_of(user: str) -> None:
    found = subprocess.run(["pgrep", "-u", user], capture_output=True, text=True).stdout.split()
    for pid in found:
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass


def _private_ancestors(*paths: Path) -> dict[Path, int]:
    """Folders above these paths that other users cannot pass through, with their modes. The students'
    servers run as their users on the test's environment (`BASE_VENV`) and the editable course library, so
    for the test's duration those folders get o+x (pass through, not list), and their modes back after."""
    found: dict[Path, int] = {}
    for path in paths:
        for folder in [path.resolve(), *path.resolve().parents]:
            mode = stat.S_IMODE(folder.stat().st_mode)
            if not mode & stat.S_IXOTH:
                found[folder] = mode
    return found


@pytest.fixture(scope="module")
def klass():
    # setup-class.sh writes machine-wide files (/etc/profile.d, sudoers, login.defs): a second run of this test at
    # the same time (another checkout) would point this class's instructor at its exchange and commands. One at a time.
    lock = open("/tmp/torchcourse-class-test.lock", "w")  # noqa: SIM115 (held until the module ends)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        yield from _klass()
    finally:
        lock.close()


def _klass():
    saved = {f: Path(f).read_bytes() if Path(f).exists() else None for f in ETC_FILES}
    had_group = subprocess.run(["getent", "group", "torchcourse"], capture_output=True).returncode == 0
    tmp = Path(tempfile.mkdtemp(prefix="torchcourse-class-", dir="/tmp"))
    tmp.chmod(0o755)  # students' servers read the environment under it
    tag = secrets.token_hex(3)
    inst, s1, s2, zh = f"tci{tag}", f"tca{tag}", f"tcb{tag}", f"tcz{tag}"
    hub, api, proxy = _free_ports(3)
    outlived: dict[str, list[str]] = {}
    k = Klass(tmp=tmp, prefix=tmp / "prefix", exchange=tmp / "exchange", inst=inst, students=(s1, s2), zh=zh,
              passwords={u: secrets.token_urlsafe(12) for u in (inst, s1, s2, zh)},
              base=f"https://hub.localhost:{hub}",
              port=hub, cert=tmp / "hub.crt")
    private = _private_ancestors(Path(sys.prefix), REPO)
    for folder, mode in private.items():  # a clone in a private folder (mktemp -d, as CI's fresh clone is)
        folder.chmod(mode | stat.S_IXOTH)
    env = {**os.environ, "INSTRUCTOR": inst, "PREFIX": str(k.prefix), "EXCHANGE": str(k.exchange),
           "HOME_BASE": str(tmp / "home"), "HUB_IP": "127.0.0.1", "HUB_PORT": str(hub), "HUB_API_PORT": str(api),
           "PROXY_API_PORT": str(proxy), "BASE_VENV": sys.prefix, "START": "0",
           "KERNEL_DIR": str(tmp / "kernels"), "HUB_HOST": "hub.localhost", "SSL_CERT": str(k.cert),
           "SSL_KEY": str(tmp / "hub.key"), "INBOUND_QUOTA_MB": "300", "INBOUND_CHECK_S": "2",
           "HOME_MB": "256", "TMP_MB": "64", "SHM_MB": "64"}
    try:
        # https, as a class beyond loopback has it (the hub's cookies are then host-only, __Host-): a certificate for
        # the hub and each user's host. Browsers resolve *.localhost to loopback themselves; this machine's resolver
        # (requests) is told in /etc/hosts.
        names = ["hub.localhost"] + [f"{u}.hub.localhost" for u in (inst, s1, s2, zh)]
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                        "-subj", "/CN=hub.localhost",
                        "-addext", "subjectAltName=" + ",".join(f"DNS:{n}" for n in names),
                        "-keyout", env["SSL_KEY"], "-out", env["SSL_CERT"]], check=True, capture_output=True)
        with open("/etc/hosts", "a") as hosts:
            hosts.write("".join(f"127.0.0.1 {n}\n" for n in names))
        t = time.monotonic()
        done = subprocess.run(["bash", str(REPO / "deploy" / "setup-class.sh")], env=env, capture_output=True,
                              text=True, timeout=600)
        assert done.returncode == 0, f"setup-class.sh failed:\n{done.stdout}\n{done.stderr}"
        k.log.append(f"$ setup-class.sh\n{done.stdout}{done.stderr}")
        k.times["setup (make class, environment reused)"] = time.monotonic() - t
        subprocess.run(["chpasswd"], input=f"{inst}:{k.passwords[inst]}\n", text=True, check=True)
        for s in (s1, s2):
            named = f"{s}=Ada Lovelace" if s == s1 else s  # formgrader shows the name; without one, the user name
            added = subprocess.run(["bash", str(REPO / "deploy" / "add-student.sh"), named], check=True,
                                   capture_output=True, text=True, env={**env, "PASSWORD": k.passwords[s]})
            k.log.append(f"$ add-student.sh {named}\n{added.stdout}{added.stderr}")
        added = subprocess.run(["bash", str(REPO / "deploy" / "add-student.sh"), "--language", "zh_CN", zh],
                               check=True, capture_output=True, text=True, env={**env, "PASSWORD": k.passwords[zh]})
        k.log.append(f"$ add-student.sh --language zh_CN {zh}\n{added.stdout}{added.stderr}")
        k.course = k.home(inst) / "torchcourse"
        t = time.monotonic()
        done = subprocess.run(["bash", str(REPO / "deploy" / "hub.sh"), "start", str(k.prefix)], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, f"the hub did not start:\n{done.stdout}{done.stderr}\n" + \
            (k.prefix / "state" / "hub.log").read_text()[-3000:]
        k.times["hub start (until /hub/api answers)"] = time.monotonic() - t
        yield k
    finally:
        if (k.prefix / "etc" / "class.env").exists():
            t = time.monotonic()
            subprocess.run(["bash", str(REPO / "deploy" / "hub.sh"), "stop", str(k.prefix)], capture_output=True,
                           timeout=120)
            k.times["hub stop (servers and proxy too)"] = time.monotonic() - t
            time.sleep(0.5)  # a process killed a moment ago may still be ending
            outlived = {u: [line for line in subprocess.run(["ps", "-u", u, "-o", "stat=,pid=,args="],
                                                            capture_output=True, text=True).stdout.splitlines()
                            if not line.startswith("Z")]  # a zombie is dead, waiting for its parent to reap it
                        for u in (s1, s2, zh)}
        for user in (inst, s1, s2, zh):
            _kill_processes_of(user)
        if (k.prefix / "bin" / "class-homes").exists():  # the students' homes are file systems of their own
            subprocess.run([str(k.prefix / "bin" / "class-homes"), "umount"], capture_output=True, timeout=60)
        for user in (inst, s1, s2, zh):
            subprocess.run(["userdel", "-r", user], capture_output=True)
        if not had_group:
            subprocess.run(["groupdel", "torchcourse"], capture_output=True)
        for f, data in saved.items():
            if data is None:
                Path(f).unlink(missing_ok=True)
            else:
                Path(f).write_bytes(data)
        for folder, mode in private.items():
            folder.chmod(mode)
        k.outcomes["a student's process started with setsid, after hub.sh stop"] = \
            "ALIVE" if any(outlived.values()) else "killed"
        summary = {"times_s": {k_: round(v, 1) for k_, v in k.times.items()}, "attacks": k.outcomes}
        print("\nclass hub measurements: " + json.dumps(summary, indent=1))
        if os.environ.get("TORCHCOURSE_CLASS_LOG"):
            hub_log = k.prefix / "state" / "hub.log"
            k.log.append("$ cat hub.log\n" + (hub_log.read_text() if hub_log.exists() else "(none)"))
            Path(os.environ["TORCHCOURSE_CLASS_LOG"]).write_text("\n".join(k.log))
        subprocess.run(["rm", "-rf", str(tmp)])  # shutil.rmtree recurses: an attack's 1,100 folders exhaust it
    # Checked after the clean-up, which kills them anyway: a student's processes end with hub.sh stop.
    assert not any(outlived.values()), outlived


@pytest.fixture(scope="module")
def round_(klass):
    """One class round through the hub; returns the grades nbgrader exports."""
    k = klass
    s1, s2 = k.students
    t0 = time.monotonic()
    shutil.copytree(SOLUTIONS, k.course / "solutions" / CH)
    subprocess.run(["chown", "-R", f"{k.inst}:", str(k.course / "solutions")], check=True)
    # The instructor releases the chapter while the servers start (as in a class: released before students come).
    release = subprocess.Popen(["runuser", "-l", k.inst, "-c", f"cd ~/torchcourse && nbgrader generate_assignment "
                                f"{CH} --force --no-db && nbgrader release_assignment {CH}"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    # Student 1 configures her own server before it starts: an extra response header stands in for a server
    # extension that would serve pages to other users' browsers.
    k.run_as(s1, "mkdir -p ~/.jupyter && echo '{\"ServerApp\": {\"tornado_settings\": {\"headers\": "
                 "{\"X-Student-Config\": \"loaded\"}}}}' > ~/.jupyter/jupyter_server_config.json")
    # ... and a page with a script that her server serves to anyone, unauthenticated: JupyterLab serves the static
    # files of extensions in her own data folder (~/.local/share/jupyter/labextensions).
    page = k.home(s1) / ".local/share/jupyter/labextensions" / EVIL_EXTENSION / "static" / "page.html"
    k.run_as(s1, f"mkdir -p {page.parent}")
    page.write_text(EVIL_PAGE)
    shutil.chown(page, s1, s1)
    for user in (k.inst, s1, s2):
        k.login(user)
    started = {}
    for user in (k.inst, s1, s2):
        r = k.sessions[user].post(f"{k.base}/hub/api/users/{user}/server", headers=k.hub_xsrf(user), timeout=60)
        assert r.status_code in (201, 202), f"{user}: spawn {r.status_code} {r.text[:200]}\n" + \
            (k.prefix / "state" / "hub.log").read_text()[-3000:]
        started[user] = time.monotonic()
    waiting = set(started)
    deadline = time.monotonic() + 240
    while waiting and time.monotonic() < deadline:
        for user in sorted(waiting):
            model = k.sessions[user].get(f"{k.base}/hub/api/user", headers=k.hub_xsrf(user), timeout=30).json()
            if model.get("servers", {}).get("", {}).get("ready"):
                k.times[f"server start ({'instructor' if user == k.inst else 'student'} {user})"] = \
                    time.monotonic() - started[user]
                waiting.discard(user)
        time.sleep(0.3)
    assert not waiting, f"servers not ready after 240 s: {waiting}\n" + \
        (k.prefix / "state" / "hub.log").read_text()[-3000:]
    for user in (k.inst, s1, s2):  # the OAuth dance that sets the server's own cookie and _xsrf
        assert k.sessions[user].get(f"{k.server(user)}/lab", timeout=60).status_code == 200

    out, _ = release.communicate(timeout=600)
    assert release.returncode == 0, f"release failed:\n{out}"
    k.times["release (generate + release_assignment, while the servers start)"] = time.monotonic() - t0
    t_round = time.monotonic()
    names = sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))

    def student_works(user: str) -> None:
        k.action(user, "fetch")
        for name in names:
            rel, sol = k.course / "chapters" / CH / f"{name}.ipynb", SOLUTIONS / f"{name}.ipynb"
            nb = submission(rel, sol) if user == s2 else nbformat.read(str(rel), as_version=4)
            if user == s1 and name == names[0]:  # learner code that tries to write into the instructor's home
                nb.cells.append(nbformat.v4.new_code_cell(
                    f"open({str(k.home(k.inst) / 'pwned')!r}, 'w').write('x')"))
            k.put_notebook(user, f"{CH}/{name}.ipynb", nb)
        k.action(user, "submit")

    with ThreadPoolExecutor(2) as pool:  # the two students at once, as in a class
        list(pool.map(student_works, (s1, s2)))
    collected = k.run_as(k.inst, f"cd ~/torchcourse && python -m grader collect {CH}")
    assert f"{CH}: {s1} -> {s1}" in collected.stdout and f"{CH}: {s2} -> {s2}" in collected.stdout, collected.stdout
    t = time.monotonic()
    poller = _stage_poller(k, s1)
    graded = _autograde(k)
    k.times["autograde (2 students, sandbox)"] = time.monotonic() - t
    (k.tmp / "stop-polling").touch()
    polled, _ = poller.communicate(timeout=60)
    k.run_as(k.inst, f"cd ~/torchcourse && python -m grader feedback {CH} && release-feedback {CH} .")
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda user: k.action(user, "fetch_feedback"), (s1, s2)))
    k.run_as(k.inst, "cd ~/torchcourse && nbgrader export")
    grades = _grades(k)
    k.times["class round (fetch to export)"] = time.monotonic() - t_round
    k.times["release, login and servers to export"] = time.monotonic() - t0
    records = {u: json.loads((k.course / "autograded" / u / CH / ".torchcourse-grade.json").read_text())
               for u in (s1, s2)}
    return {"grades": grades, "names": names, "autograde": graded, "records": records, "polled": polled}


# A student's poller: every few milliseconds, everything it can read under the grading command's stage.
POLLER = r"""
import glob, json, os, sys, time
seen, read = set(), []
while not os.path.exists(sys.argv[1]):
    for stage in glob.glob("/tmp/torchcourse-grade-*"):
        seen.add(stage)
        for top, dirs, files in os.walk(stage):
            for name in files:
                try:
                    with open(os.path.join(top, name), "rb") as f:
                        f.read(1)
                    read.append(os.path.join(top, name))
                except OSError:
                    pass
    time.sleep(0.005)
print(json.dumps({"stages": sorted(seen), "read": sorted(set(read))}))
"""


def _stage_poller(k: Klass, user: str) -> subprocess.Popen:
    return subprocess.Popen(["runuser", "-u", user, "--", sys.executable, "-c", POLLER, str(k.tmp / "stop-polling")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _autograde(k: Klass) -> str:
    """The instructor's grading command: through sudo where it is installed, else root runs it for them."""
    if shutil.which("sudo"):
        done = k.run_as(k.inst, f"sudo -n {k.prefix}/bin/autograde {CH}")
    else:
        done = subprocess.run([str(k.prefix / "bin" / "autograde"), CH], capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _grades(k: Klass) -> dict[str, float]:
    text = k.run_as(k.inst, "cat ~/torchcourse/grades.csv").stdout
    # the two students of the round (nbgrader export lists every student of the gradebook, with 0 for no submission)
    return {r["student_id"]: float(r["score"]) for r in csv.DictReader(io.StringIO(text))
            if r["assignment"] == CH and r["student_id"] in k.students}


def _max_score() -> float:
    return sum(sum(grade_points(nbformat.read(str(p), as_version=4)).values()) for p in SOLUTIONS.glob("*.ipynb"))


def test_each_server_runs_as_its_user(klass, round_):
    for user in (klass.inst, *klass.students):
        pids = subprocess.run(["pgrep", "-u", user, "-f", "jupyterhub.singleuser"], capture_output=True,
                              text=True).stdout.split()
        assert len(pids) == 1, f"{user}: singleuser processes {pids}"
    for user in klass.students:  # what the student's server wrote (the fetched, then edited notebooks) is theirs
        for name in round_["names"]:
            path = klass.home(user) / CH / f"{name}.ipynb"
            assert path.stat().st_uid == _uid(user), f"{path} belongs to uid {path.stat().st_uid}"


def _uid(user: str) -> int:
    import pwd

    return pwd.getpwnam(user).pw_uid


def test_a_class_round_grades_feeds_back_and_exports(klass, round_):
    s1, s2 = klass.students
    why = f"{round_['autograde']}\n{json.dumps(round_['records'], indent=1)[:4000]}"
    assert round_["grades"][s2] == _max_score() > 0, why
    assert round_["grades"][s1] == 0, why
    for user in (s1, s2):  # nbgrader's fetch_feedback put the pages into the student's own folder
        pages = list((klass.home(user) / CH / "feedback").glob("*/*.html"))
        assert sorted(p.stem for p in pages) == round_["names"], pages
        assert all(p.stat().st_uid == _uid(user) for p in pages)


def test_learner_code_never_ran_as_the_instructor(klass, round_):
    assert not (klass.home(klass.inst) / "pwned").exists()


def test_only_the_instructor_has_formgrader(klass, round_):
    k, (s1, _) = klass, klass.students
    assert k.sessions[k.inst].get(f"{k.server(k.inst)}/formgrader", timeout=60).status_code == 200
    mine = k.sessions[s1].get(f"{k.server(s1)}/formgrader", timeout=60).status_code
    # The hub sends the browser to its OAuth page, which refuses: another user's server is not theirs.
    theirs = k.sessions[s1].get(f"{k.server(k.inst)}/formgrader", timeout=60).status_code
    api = k.sessions[s1].get(f"{k.server(k.inst)}/api/contents", allow_redirects=False, timeout=60).status_code
    k.outcomes["student opens /formgrader in own server"] = f"HTTP {mine}"
    k.outcomes["student opens the instructor's /formgrader and files"] = f"HTTP {theirs}, {api}"
    assert mine == 404
    assert theirs == 403 and api == 403


@pytest.fixture(scope="module")
def attacks(klass, round_):
    """Student 1 attacks; returns {attack: (exit status, output)} for the file-system ones."""
    k, (s1, s2) = klass, klass.students
    c, ex = f"{k.exchange}/{COURSE_ID}", k.exchange
    tries = {
        "rename the course folder": f"mv {c} {ex}/mine",
        "rename inbound": f"mv {c}/inbound {c}/mine",
        "squat the next chapter's release": f"mkdir -p {c}/outbound/99-next",
        "list other submissions": f"ls {c}/inbound",
        "read the instructor's home": f"ls {k.home(k.inst)}",
        "read the gradebook": f"cat {k.course}/gradebook.db",
        "read the solutions": f"cat {k.course}/solutions/{CH}/*.ipynb",
        "read the hub's database": f"cat {k.prefix}/state/jupyterhub.sqlite",
        "read the other student's home": f"ls {k.home(s2)}",
        "grade as root": f"sudo -n {k.prefix}/bin/autograde {CH}",
    }
    done = {what: k.run_as(s1, cmd, check=False) for what, cmd in tries.items()}
    # Submitting as the other student: nbgrader's own --student, then a folder dated 2099 made by hand.
    impostor = k.run_as(s1, f"cd ~ && nbgrader submit {CH} --student={s2}", check=False)
    fake = f"{c}/inbound/{s2}+{CH}+2099-01-01 00:00:00.000000 UTC+zzzzzzzzzzzz"
    dated = k.run_as(s1, f"mkdir '{fake}' && cp ~/{CH}/*.ipynb '{fake}/' && "
                         f"echo '2099-01-01 00:00:00.000000 UTC' > '{fake}/timestamp.txt'", check=False)
    # A folder 1,100 levels deep in a submission of her own: collect names it and goes on for everyone.
    deep = f"{c}/inbound/{s1}+{CH}+{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())}.000000 UTC+deepdeepdeep"
    # ... and undeletable by the instructor, who owns inbound (its first folder read-only).
    dig = (f"import os\nos.mkdir({deep!r})\nos.chdir({deep!r})\nfor _ in range(1100):\n os.mkdir('d')\n os.chdir('d')"
           f"\nos.chmod({deep + '/d'!r}, 0o555)")
    k.run_as(s1, f"{sys.executable} -c {shlex.quote(dig)}")
    kernel = _kernel_sniffing(k, s1, s2)
    # The instructor clicks formgrader's Autograde (learner code as the instructor) and Collect (nbgrader's own).
    fg = f"{k.server(k.inst)}/formgrader/api"
    buttons = {what: k.sessions[k.inst].post(f"{fg}/{url}", headers=k.user_xsrf(k.inst), timeout=300).json()
               for what, url in (("autograde", f"submission/{CH}/{s1}/autograde"),
                                 ("collect", f"assignment/{CH}/collect"))}
    collect = k.run_as(k.inst, f"cd ~/torchcourse && python -m grader collect {CH}")
    _autograde(k)
    by_hand = k.run_as(k.inst, f"rm -rf {shlex.quote(deep)}", check=False)
    cleared = k.run_as(k.inst, f"sudo -n {k.prefix}/bin/clear-inbound {s1} {CH}", check=False)
    left = {p.name: p.owner() for p in (k.exchange / COURSE_ID / "inbound").iterdir()}
    for what, r in done.items():
        last = (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1][-120:]
        k.outcomes[what] = f"refused: {last}" if r.returncode else "ALLOWED"
    return {"tries": done, "impostor": impostor, "dated": dated, "collect": collect, "grades": _gradebook(k),
            "kernel": kernel, "buttons": buttons, "deep": Path(deep).name, "by_hand": by_hand, "cleared": cleared,
            "left": left}


def _kernel_sniffing(k: Klass, owner: str, sniffer: str) -> dict:
    """`owner` starts a kernel in her server; what of it can `sniffer` reach: its TCP ports, its sockets' folder."""
    r = k.sessions[owner].post(f"{k.server(owner)}/api/kernels", headers=k.user_xsrf(owner),
                               json={"name": "python3"}, timeout=120)
    assert r.status_code == 201, f"{owner}: kernel {r.status_code} {r.text[:300]}"
    kid = r.json()["id"]
    try:
        deadline, found = time.monotonic() + 60, []
        while not found and time.monotonic() < deadline:
            found = list(k.home(owner).glob(f".local/share/jupyter/runtime/kernel-{kid}.json"))
            time.sleep(0.2)
        assert found, f"{owner}: no connection file for kernel {kid}"
        info = json.loads(found[0].read_text())
        pids = subprocess.run(["pgrep", "-u", owner, "-f", kid], capture_output=True, text=True).stdout.split()
        listening = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout.splitlines()
        tcp = [line for line in listening if any(f"pid={pid}," in line for pid in pids)]
        reach = k.run_as(sniffer, f"ls {Path(info['ip']).parent}", check=False)
        return {"transport": info["transport"], "ip": info["ip"], "pids": pids, "tcp": tcp,
                "sniffer": reach.returncode, "sniffer_err": reach.stderr.strip()[-120:]}
    finally:
        k.sessions[owner].delete(f"{k.server(owner)}/api/kernels/{kid}", headers=k.user_xsrf(owner), timeout=60)


def _gradebook(k: Klass) -> dict[str, float]:
    """Each student's total in the gradebook, read directly (nbgrader export reads the same)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{k.course / 'gradebook.db'}", COURSE_ID) as gb:  # the two who submitted CH
        return {s: gb.find_submission(CH, s).score for s in k.students}


def test_a_student_cannot_touch_the_exchange_or_read_what_is_not_theirs(klass, attacks):
    allowed = [what for what, r in attacks["tries"].items() if r.returncode == 0]
    assert allowed == [], {w: attacks["tries"][w].stdout[:200] for w in allowed}
    assert (klass.exchange / COURSE_ID / "inbound").is_dir()
    assert not (klass.exchange / COURSE_ID / "outbound" / "99-next").exists()
    outbound = klass.exchange / COURSE_ID / "outbound"
    assert outbound.owner() == klass.inst and CH in {p.name for p in outbound.iterdir()}
    assert all(p.owner() == klass.inst for p in outbound.iterdir())


def test_a_submission_as_the_other_student_is_refused_and_her_grade_unchanged(klass, round_, attacks):
    s1, s2 = klass.students
    assert attacks["impostor"].returncode == 0, "nbgrader itself accepts --student; collect must refuse it"
    assert attacks["dated"].returncode == 0
    err = attacks["collect"].stderr
    refused = [line for line in err.splitlines() if line.startswith(f"collect: refused {s2}+{CH}+")]
    assert len(refused) == 2, err
    assert all(f"belongs to {s1}" in line and "cheating attempt" in line for line in refused), err
    klass.outcomes["submit as the other student (nbgrader submit --student, and a folder dated 2099)"] = \
        "refused by collect: " + refused[0].split(": ", 2)[-1][:100]
    assert attacks["grades"][s2] == round_["grades"][s2] == _max_score()
    assert attacks["grades"][s1] == round_["grades"][s1] == 0
    klass.outcomes["honest student's grade after the attacks"] = \
        f"{attacks['grades'][s2]:g} of {_max_score():g} (unchanged)"


def test_a_student_reads_nothing_of_the_grading_stage(klass, round_):
    polled = json.loads(round_["polled"])
    klass.outcomes["poll the grading stage while results are copied back"] = \
        f"{len(polled['stages'])} stage(s) seen, {len(polled['read'])} files read"
    assert polled["stages"], "the poller never saw the stage: it proves nothing"
    assert polled["read"] == [], polled["read"][:20]


def test_kernels_listen_on_no_port_and_their_sockets_are_private(klass, attacks):
    kernel = attacks["kernel"]
    klass.outcomes["subscribe to another student's kernel"] = \
        f"transport {kernel['transport']}, {len(kernel['tcp'])} TCP ports; her runtime folder: {kernel['sniffer_err']}"
    assert kernel["pids"], kernel
    # Its five channels are ipc sockets. What TCP remains is ipykernel's pipe for forked subprocesses' output: a
    # PULL socket, which sends nothing to whoever connects, and drops what lacks its random key.
    assert kernel["transport"] == "ipc" and len(kernel["tcp"]) <= 1, kernel
    assert kernel["ip"] == str(klass.tmp / "kernels" / klass.students[0] / "kernel"), kernel
    assert kernel["sniffer"] != 0, kernel


def test_formgrader_autograde_and_collect_name_the_course_commands(klass, attacks):
    auto, coll = attacks["buttons"]["autograde"], attacks["buttons"]["collect"]
    klass.outcomes["formgrader's Autograde and Collect buttons"] = \
        f"autograde success={auto['success']}, collect success={coll['success']}"
    assert not auto["success"] and f"{klass.prefix}/bin/autograde {CH}" in auto.get("error", ""), auto
    assert not coll["success"] and f"python -m grader collect {CH}" in coll.get("error", ""), coll
    assert not (klass.home(klass.inst) / "pwned").exists()


def test_a_folder_too_deep_is_refused_and_named_and_collect_goes_on(klass, attacks):
    err = attacks["collect"].stderr
    line = next((x for x in err.splitlines() if attacks["deep"] in x), "")
    klass.outcomes["a submission 1,100 folders deep"] = line.split(": ", 2)[-1][:100] or "not named"
    assert "levels deep; refused" in line, err


@pytest.fixture(scope="module")
def hand_graded(klass, round_, attacks):
    """The instructor gives student 1 full marks on one answer in formgrader, then runs report and export."""
    k, (s1, _) = klass, klass.students
    fg, web, xsrf = f"{k.server(k.inst)}/formgrader/api", k.sessions[k.inst], k.user_xsrf(k.inst)
    subs = web.get(f"{fg}/submitted_notebooks/{CH}/{round_['names'][0]}", headers=xsrf, timeout=60).json()
    sub = next(x for x in subs if x.get("student") == s1)
    grades = web.get(f"{fg}/grades", params={"submission_id": sub["id"]}, headers=xsrf, timeout=60).json()
    grade = next(g for g in grades if g["max_score"])
    r = web.put(f"{fg}/grade/{grade['id']}", headers=xsrf, json={"manual_score": grade["max_score"]}, timeout=60)
    assert r.status_code == 200, r.text[:300]
    k.run_as(k.inst, f"cd ~/torchcourse && python -m grader report {CH} && nbgrader export")
    text = k.run_as(k.inst, f"cat ~/torchcourse/reports/{CH}.csv").stdout
    return {"manual": grade["max_score"], "export": _grades(k),
            "report": {r["student"]: float(r["score"]) for r in csv.DictReader(io.StringIO(text))}}


def test_report_and_export_agree_after_manual_grading(klass, hand_graded):
    s1, s2 = klass.students
    klass.outcomes["manual grade in formgrader, then report and export"] = \
        f"report {hand_graded['report']}, export {hand_graded['export']}"
    assert hand_graded["export"][s1] == hand_graded["manual"] > 0, hand_graded
    assert hand_graded["report"] == hand_graded["export"] == {s1: hand_graded["manual"], s2: _max_score()}


def test_the_instructor_clears_a_students_undeletable_inbound_entries(klass, attacks):
    s1, s2 = klass.students
    klass.outcomes["an inbound entry the instructor cannot delete"] = \
        f"rm: exit {attacks['by_hand'].returncode}; clear-inbound: {attacks['cleared'].stdout.strip().splitlines()[-1]}"
    assert attacks["by_hand"].returncode != 0, "the entry was deletable: the attack proves nothing"
    assert attacks["cleared"].returncode == 0, attacks["cleared"].stderr
    assert attacks["deep"] not in attacks["left"], attacks["left"]
    assert s1 not in attacks["left"].values(), attacks["left"]
    assert [n for n, owner in attacks["left"].items() if owner == s2 and n.startswith(f"{s2}+{CH}+")], attacks["left"]


def test_a_student_checks_her_notebook_with_the_grader_on_the_hub(klass, round_):
    s2 = klass.students[1]
    done = klass.run_as(s2, f"cd ~/{CH} && python -m grader check {round_['names'][0]}.ipynb", check=False)
    klass.outcomes["python -m grader check on the hub"] = f"exit {done.returncode}"
    assert done.returncode == 0 and "passed" in done.stdout, done.stdout + done.stderr


def test_servers_keep_caches_at_home_and_lab_asks_no_news(klass, round_):
    s1 = klass.students[0]
    pid = subprocess.run(["pgrep", "-u", s1, "-f", "jupyterhub.singleuser"], capture_output=True,
                         text=True).stdout.split()[0]
    env = dict(x.split("=", 1) for x in Path(f"/proc/{pid}/environ").read_text().split("\0") if "=" in x)
    assert env.get("TORCHINDUCTOR_CACHE_DIR") == f"{klass.home(s1)}/.cache/torchinductor", env
    page = klass.sessions[s1].get(f"{klass.server(s1)}/lab", timeout=60).text
    assert "@jupyterlab/apputils-extension:announcements" in page


def test_students_have_names_in_the_gradebook(klass, round_):
    from nbgrader.api import Gradebook

    s1, s2 = klass.students
    with Gradebook(f"sqlite:///{klass.course / 'gradebook.db'}", COURSE_ID) as gb:
        names = {s.id: (s.first_name, s.last_name) for s in gb.students}
    assert names[s1] == ("Ada", "Lovelace") and names[s2][1] == s2, names


def test_a_student_starts_a_process_meant_to_outlive_the_hub(klass, round_):
    """Checked when the module ends: hub.sh stop kills it (the fixture's teardown fails otherwise)."""
    s1 = klass.students[0]
    klass.run_as(s1, "setsid sleep 900 </dev/null >/dev/null 2>&1 &")
    deadline = time.monotonic() + 10  # setsid forks, and its child becomes `sleep` a moment after the shell returns
    while subprocess.run(["pgrep", "-u", s1, "-x", "sleep"], capture_output=True).returncode != 0:
        assert time.monotonic() < deadline, "the student's sleep never started"
        time.sleep(0.1)


def test_setup_says_the_checkout_holding_solutions_is_readable(klass):
    # Here the environment is layered from inside the checkout (BASE_VENV), which must stay readable: then the
    # set-up says so. Without BASE_VENV it makes the checkout root's alone.
    assert f"WARNING: {REPO} holds the solutions" in klass.log[0], klass.log[0][-2000:]


def test_a_students_own_jupyter_config_is_not_loaded(klass, round_):
    s1 = klass.students[0]
    r = klass.sessions[s1].get(f"{klass.server(s1)}/api/status", timeout=60)
    klass.outcomes["a student's own ~/.jupyter server config"] = \
        "loaded" if "X-Student-Config" in r.headers else "ignored"
    assert r.status_code == 200 and "X-Student-Config" not in r.headers, dict(r.headers)
    # JupyterLab still saves her workspace (into her home, not the root-owned configuration folder)
    r = klass.sessions[s1].put(f"{klass.server(s1)}/lab/api/workspaces/default", headers=klass.user_xsrf(s1),
                               json={"data": {}, "metadata": {"id": "default"}}, timeout=60)
    assert r.status_code in (200, 204), f"{r.status_code} {r.text[:300]}"
    assert list(klass.home(s1).glob(".jupyter/lab/workspaces/default*"))


# A page one student's server serves (see round_): opened by someone logged in to the hub, its script tries to act in
# the server named after '#': read the _xsrf cookie from a window it opens there, read the files, write one with it.
EVIL_EXTENSION = "tc-page"
EVIL_PAGE = r"""<!doctype html><title>working</title><body><script>
(async () => {
  const target = decodeURIComponent(location.hash.slice(1)), out = {origin: location.origin, here: document.cookie};
  const w = window.open(target + "/lab", "target");
  let xsrf = "";
  for (let i = 0; i < 100; i++) {  // until its page has loaded, or the browser refuses to let this one look
    await new Promise(r => setTimeout(r, 200));
    try {
      if (w.document.readyState === "complete" && w.location.pathname.endsWith("/lab")) {
        out.cookie = w.document.cookie; xsrf = (out.cookie.match(/_xsrf=([^;]+)/) || ["", ""])[1]; break;
      }
    } catch (e) { out.cookie = "refused: " + e.name; break; }
  }
  try {
    const r = await fetch(target + "/api/contents", {credentials: "include", headers: {"X-XSRFToken": xsrf}});
    out.read = "HTTP " + r.status + ", " + (await r.text()).length + " bytes";
  } catch (e) { out.read = "refused: " + e.name; }
  try {
    const r = await fetch(target + "/api/contents/written-by-a-page.txt", {method: "PUT", credentials: "include",
      headers: {"Content-Type": "application/json", "X-XSRFToken": xsrf},
      body: JSON.stringify({type: "file", format: "text", content: "x"})});
    out.write = "HTTP " + r.status;
  } catch (e) { out.write = "refused: " + e.name; }
  w.close();
  document.body.textContent = JSON.stringify(out); document.title = "done";
})();
</script></body>
"""


@pytest.fixture(scope="module")
def browsers(klass, round_, browser):
    """The session's Chromium, each person in a context of their own, logged in through the hub's
    form: the student opens her own page, then the other student and the instructor open it, aimed at their own
    servers; the instructor opens a submission in formgrader. Returns what each saw."""
    k, (s1, s2) = klass, klass.students
    page_url = f"{k.server(s1)}/lab/extensions/{EVIL_EXTENSION}/static/page.html"
    seen: dict = {}

    def person(user: str):
        context = browser.new_context(ignore_https_errors=True)
        page = context.new_page()
        page.goto(f"{k.base}/hub/login", timeout=60_000)
        page.fill("#username_input", user)
        page.fill("#password_input", k.passwords[user])
        with page.expect_navigation(timeout=60_000):
            page.click("#login_submit")
        page.goto(f"{k.server(user)}/lab", wait_until="domcontentloaded", timeout=120_000)
        return context, page

    def opens_the_page(page, target: str) -> dict:
        page.goto(f"{page_url}#{target}", timeout=60_000)
        page.wait_for_function("document.title === 'done'", timeout=90_000)
        return json.loads(page.inner_text("body"))

    for user in (s1, s2, k.inst):
        context, page = person(user)
        # what this browser sends to her host, by the browser's own rules (host-only cookies stay on their host)
        seen.setdefault("sent", {})[user] = {c["name"]: c["value"] for c in context.cookies(page_url)}
        seen[user] = opens_the_page(page, k.server(user))
        if user == k.inst:
            seen["formgrader"] = _formgrader_in_the_browser(k, page)
        context.close()
    return seen


def _formgrader_in_the_browser(k: Klass, page) -> dict:
    """The instructor opens the first submission in formgrader: what failed on the page, what it fetched from where."""
    fg = f"{k.server(k.inst)}/formgrader"
    subs = k.sessions[k.inst].get(f"{fg}/api/submitted_notebooks/{CH}/{_names()[0]}", headers=k.user_xsrf(k.inst),
                                  timeout=60).json()
    errors, hosts = [], set()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: msg.type == "error" and errors.append(msg.text))
    page.on("request", lambda req: req.url.startswith("http") and hosts.add(req.url.split("/")[2].rsplit(":", 1)[0]))
    r = page.goto(f"{fg}/submissions/{subs[0]['id']}", timeout=60_000)
    try:  # formgrade.js sets MathJax.loaded once MathJax has typeset the page
        page.wait_for_function("window.MathJax && MathJax.loaded === true", timeout=60_000)
    except Exception as exc:  # what the page said is the failure's account
        errors.append(f"MathJax never finished: {type(exc).__name__}")
    return {"status": r.status, "errors": errors, "hosts": sorted(hosts),
            "mathjax": page.evaluate("window.MathJax ? String(MathJax.version) : 'absent'")}


def _names() -> list[str]:
    return sorted(p.stem for p in SOLUTIONS.glob("*.ipynb"))


def test_a_page_from_a_students_server_acts_only_in_her_own(klass, browsers):
    k, (s1, s2) = klass, klass.students
    own = browsers[s1]
    # The page works: in the server it came from, it reads the _xsrf cookie, the files, and writes one.
    assert "_xsrf=" in own.get("cookie", "") and own["read"].startswith("HTTP 200") and own["write"] == "HTTP 201", own
    assert (k.home(s1) / "written-by-a-page.txt").exists()
    for victim in (s2, k.inst):
        got = browsers[victim]
        k.outcomes[f"a page from {s1}'s server, opened by {'the instructor' if victim == k.inst else s2}"] = \
            f"cookie {got.get('cookie', 'never readable')}; files {got['read']}; write {got['write']}"
        assert got["origin"] == f"https://{s1}.hub.localhost:{k.port}", got
        assert "_xsrf" not in got.get("cookie", "") and "jupyterhub" not in got["here"], got
        assert got["read"].startswith("refused"), got
        assert not got["write"].startswith("HTTP 2"), got
        assert not (k.home(victim) / "written-by-a-page.txt").exists()


def test_the_only_hub_cookie_a_students_server_receives_is_no_credential(klass, browsers):
    """What another user's Chromium, logged in and in their own server, sends to student 1's host: of the hub's
    and the other servers' cookies, only jupyterhub-session-id (set on the hub's domain, by JupyterHub's design).
    Used as hers, it opens neither the hub's API nor his server as him."""
    import requests

    k, (s1, s2) = klass, klass.students
    sent = {victim: browsers["sent"][victim] for victim in (s2, k.inst)}
    k.outcomes["cookies another user's browser sends to her host"] = sorted({n for c in sent.values() for n in c})
    assert all(set(c) == {"jupyterhub-session-id"} for c in sent.values()), sent
    stolen = sent[s2]["jupyterhub-session-id"]
    web = requests.Session()
    web.trust_env, web.verify = False, str(k.cert)
    tries = {"hub API as him": f"{k.base}/hub/api/users/{s2}", "his server's files": f"{k.server(s2)}/api/contents"}
    got = {}
    for jar in ("alone", "with her own login"):
        web.cookies.clear()
        if jar != "alone":
            web.cookies.update(k.sessions[s1].cookies)
        web.cookies.set("jupyterhub-session-id", stolen, domain="hub.localhost", path="/")
        for what, url in tries.items():
            r = web.get(url, allow_redirects=False, timeout=60)
            got[f"{what}, {jar}"] = r.status_code
            assert r.status_code in (302, 403, 404), (what, jar, r.status_code, r.text[:300])  # 302: to the hub login
    k.outcomes["his jupyterhub-session-id used by her"] = got


def test_formgrader_works_in_the_browser_with_mathjax_from_the_server(klass, browsers):
    fg = browsers["formgrader"]
    klass.outcomes["formgrader's submission page in Chromium"] = \
        f"HTTP {fg['status']}, MathJax {fg['mathjax']}, hosts {fg['hosts']}, errors {fg['errors'][:3]}"
    assert fg["status"] == 200 and fg["mathjax"].startswith("2."), fg
    assert not [e for e in fg["errors"] if "MathJax" in e], fg
    assert fg["hosts"] == [f"{klass.inst}.hub.localhost"], fg  # nothing from a CDN


@pytest.fixture(scope="module")
def flood(klass, round_, attacks):
    """Student 1 floods the exchange: 1 GiB in one entry made by hand, then 4 entries of 90 MiB (past her 300 MiB),
    then submits a chapter folder of 120 MiB from the Assignments panel. Returns what stayed and what she was told."""
    k, (s1, s2) = klass, klass.students
    inbound = k.exchange / COURSE_ID / "inbound"
    theirs = sorted(p.name for p in inbound.iterdir() if p.owner() == s2)
    now = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())

    def write(name: str, mib: int) -> None:  # real writes, as a student's script would make them
        code = (f"import os\nos.makedirs({name!r})\nwith open({name + '/data.bin'!r}, 'wb') as f:\n"
                f" for _ in range({mib // 16}): f.write(bytes(16 << 20))")
        k.run_as(s1, f"{sys.executable} -c {shlex.quote(code)}")

    def gone(name: str, since: float, within: float = 60) -> float | None:
        while time.monotonic() - since < within:
            if not (inbound / name).exists():
                return round(time.monotonic() - since, 1)
            time.sleep(0.25)
        return None

    big, t = f"{s1}+{CH}+{now}.000000 UTC+floodfloodfld", time.monotonic()
    write(str(inbound / big), 1024)
    big_gone = gone(big, t)  # seconds from the first byte written
    parts = [f"{s1}+{CH}+{now}.00000{i} UTC+floodpart{i:03d}" for i in range(4)]
    for name in parts:
        write(str(inbound / name), 90)
    time.sleep(3 * 2 + 1)  # three checks of the guard
    parts_left = [n for n in parts if (inbound / n).exists()]
    k.run_as(s1, f"for i in 1 2; do head -c {60 << 20} /dev/zero > ~/{CH}/data-$i.bin; done")
    r = k.sessions[s1].post(f"{k.server(s1)}/assignments/submit", headers=k.user_xsrf(s1),
                            data={"course_id": COURSE_ID, "assignment_id": CH}, timeout=300).json()
    k.run_as(s1, f"rm ~/{CH}/data-1.bin ~/{CH}/data-2.bin")
    log = (k.prefix / "state" / "hub.log").read_text()
    return {"big_gone_s": big_gone, "parts_left": parts_left, "submit": r, "big": big,
            "guard": [line for line in log.splitlines() if line.startswith("inbound-guard: removed")],
            "theirs_before": theirs, "theirs_after": sorted(p.name for p in inbound.iterdir() if p.owner() == s2),
            "grades": _gradebook(k)}


def test_a_flood_of_the_exchange_does_not_stay(klass, round_, flood):
    s1, s2 = klass.students
    klass.outcomes["1 GiB written into inbound by hand"] = \
        f"removed by the inbound guard after {flood['big_gone_s']} s" if flood["big_gone_s"] is not None else "STAYED"
    assert flood["big_gone_s"] is not None, flood["guard"]
    assert any(flood["big"] in line and "over 100 MiB" in line for line in flood["guard"]), flood["guard"]
    # Four entries of 90 MiB each: within a submission's limit, together past her 300 MiB: one goes.
    klass.outcomes["4 entries of 90 MiB by hand (300 MiB allowed)"] = f"{len(flood['parts_left'])} left"
    assert len(flood["parts_left"]) == 3, flood
    assert flood["theirs_after"] == flood["theirs_before"] and flood["theirs_before"], flood
    assert flood["grades"][s2] == round_["grades"][s2] == _max_score()


def test_a_submission_over_the_limit_is_refused_with_a_message(klass, flood):
    reply = flood["submit"]
    last = reply.get("value", "").strip().splitlines()[-1:] or [""]
    klass.outcomes["submit 120 MiB from the Assignments panel"] = \
        "ALLOWED" if reply.get("success") else f"refused: {last[0][-160:]}"
    assert reply.get("success") is False and "more than this class accepts" in last[0], reply


def _terminal(k: Klass, user: str, command: str, timeout: float = 120) -> tuple[int, str]:
    """`command` typed into a JupyterLab terminal of the user's own server (through the hub, over its websocket, as
    her browser would); returns its exit status and what the terminal showed."""
    import requests
    import websocket
    from requests.cookies import get_cookie_header

    web, host = k.sessions[user], f"{user}.hub.localhost:{k.port}"
    r = web.post(f"{k.server(user)}/api/terminals", headers=k.user_xsrf(user), timeout=60)
    assert r.status_code == 200, f"{user}: terminal {r.status_code} {r.text[:300]}"
    name = r.json()["name"]
    url = f"wss://{host}/user/{user}/terminals/websocket/{name}"
    cookie = get_cookie_header(web.cookies, requests.Request("GET", f"https://{host}/user/{user}/").prepare())
    ws = websocket.create_connection(url, header=[f"Cookie: {cookie}"], origin=f"https://{host}",
                                     sslopt={"ca_certs": str(k.cert)}, timeout=timeout)
    try:
        # The marker's two halves are typed apart, so the terminal's echo of the command never matches it.
        ws.send(json.dumps(["stdin", f"{command}; echo \"@@DO\"\"NE $?@@\"\r"]))
        shown, deadline = "", time.monotonic() + timeout
        while time.monotonic() < deadline:
            kind, *rest = json.loads(ws.recv())
            if kind == "stdout":
                shown += rest[0]
                done = re.search(r"@@DONE (\d+)@@", shown)
                if done:
                    k.log.append(f"$ [{user}, terminal] {command}\n{shown}")
                    return int(done[1]), shown
        raise AssertionError(f"{user}: no end of {command!r} in the terminal: {shown[-2000:]}")
    finally:
        ws.close()
        web.delete(f"{k.server(user)}/api/terminals/{name}", headers=k.user_xsrf(user), timeout=60)


@pytest.fixture(scope="module")
def in_her_server(klass, round_, flood):
    """Student 1, in a terminal of her own server: lists every process and reads the other student's and the
    instructor's servers' command lines and environments; then writes 1 GiB into her /tmp, her /dev/shm and her home.
    Student 2 then writes into his own /tmp. Her floods are removed afterwards (by her), as she would."""
    k, (s1, s2) = klass, klass.students
    pids = {u: subprocess.run(["pgrep", "-u", u, "-f", "jupyterhub.singleuser"], capture_output=True,
                              text=True).stdout.split()[0] for u in (s2, k.inst)}
    mine, before = {p: p.read_bytes() for p in (k.home(s1) / CH).glob("*.ipynb")}, _gradebook(k)
    ps = _terminal(k, s1, "ps -eo user:40,pid,args")
    peek = {u: _terminal(k, s1, f"cat /proc/{pid}/cmdline /proc/{pid}/environ; ls /proc/{pid}/fd")
            for u, pid in pids.items()}
    fill = "head -c 1G /dev/zero > {0}; s=$?; du -m {0}; rm -f {0}; (exit $s)"
    floods = {where: _terminal(k, s1, fill.format(path), timeout=300)
              for where, path in (("/tmp", "/tmp/flood"), ("/dev/shm", "/dev/shm/flood"), ("home", "~/flood"))}
    his = _terminal(k, s2, "head -c 16M /dev/zero > /tmp/his && ls /tmp")
    return {"ps": ps, "peek": peek, "pids": pids, "floods": floods, "his": his, "mine": mine,
            "mine_after": {p: p.read_bytes() for p in mine}, "grades": (before, _gradebook(k))}


def test_a_student_sees_only_her_own_processes_in_her_server(klass, in_her_server):
    k, (s1, s2) = klass, klass.students
    status, shown = in_her_server["ps"]
    users = {line.split()[0] for line in shown.splitlines() if re.match(r"^\S+\s+\d+\s", line)}
    k.outcomes["ps in her server's terminal: users listed"] = sorted(users)
    assert status == 0 and s1 in users, shown
    assert users == {s1}, shown  # not the other student, the instructor, root or the hub
    for victim, (status, shown) in in_her_server["peek"].items():
        who = "the instructor" if victim == k.inst else s2
        k.outcomes[f"read {who}'s server's cmdline, environ and fd in /proc"] = \
            f"exit {status}: " + next((x.strip()[-90:] for x in shown.splitlines() if "No such file" in x), "READ")
        assert status != 0 and "No such file or directory" in shown and victim not in shown, shown


def test_a_flood_fills_only_the_students_own_space(klass, in_her_server):
    k, s2 = klass, klass.students[1]
    limits = {"/tmp": 64, "/dev/shm": 64, "home": 256}
    for where, (status, shown) in in_her_server["floods"].items():
        said = next((line.strip() for line in shown.splitlines() if "No space left" in line
                     or "quota exceeded" in line), "")
        written = max((int(m) for m in re.findall(r"^(\d+)\s+\S*flood", shown, re.M)), default=-1)
        k.outcomes[f"1 GiB written into her {where}"] = f"exit {status} after {written} MiB: {said[-80:]}"
        assert status != 0 and said, shown
        assert 0 < written <= limits[where], shown
    status, shown = in_her_server["his"]
    k.outcomes["the other student writes 16 MiB into his /tmp after her floods"] = f"exit {status}"
    assert status == 0 and "his" in shown and "flood" not in shown, shown
    assert in_her_server["mine_after"] == in_her_server["mine"] and in_her_server["mine"]  # nothing of hers lost
    before, after = in_her_server["grades"]
    assert after == before and after[s2] == _max_score(), (before, after)


def test_hidepid_hides_other_users_processes(klass, round_):
    """deploy/hidepid.sh (HIDEPID=1, for students who also log in by ssh) on a procfs of its own, mounted here: the
    machine's /proc stays as it was."""
    k, (s1, s2) = klass, klass.students
    other = subprocess.run(["pgrep", "-u", s2, "-f", "jupyterhub.singleuser"], capture_output=True,
                           text=True).stdout.split()[0]
    before = k.run_as(s1, f"cat /proc/{other}/cmdline", check=False)
    proc = k.tmp / "proc"
    proc.mkdir()
    had_group = subprocess.run(["getent", "group", "proc"], capture_output=True).returncode == 0
    subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
    try:
        subprocess.run(["bash", str(REPO / "deploy" / "hidepid.sh"), str(proc)], check=True, capture_output=True)
        seen = k.run_as(s1, f"ls {proc}").stdout.split()
        read = k.run_as(s1, f"cat {proc}/{other}/cmdline", check=False)
        own = k.run_as(s1, f"cat {proc}/self/cmdline", check=False)
    finally:
        subprocess.run(["umount", str(proc)], check=True)
        if not had_group:
            subprocess.run(["groupdel", "proc"], capture_output=True)
    machine = subprocess.run(["findmnt", "-n", "-o", "OPTIONS", "/proc"], capture_output=True, text=True).stdout
    k.outcomes["read another student's server's command line in /proc"] = \
        f"without HIDEPID: exit {before.returncode}; with HIDEPID=1: {read.stderr.strip()[-80:] or read.returncode}"
    assert before.returncode == 0 and "singleuser" in before.stdout  # what hidepid is for
    assert other not in seen and read.returncode != 0, (seen, read.stdout)
    assert own.returncode == 0 and "cat" in own.stdout
    assert "hidepid" not in machine, machine


@pytest.fixture(scope="module")
def every_chapter(klass, round_):
    """Every real chapter of the instructor's course (committed solutions/ and chapters/, as make class copied them)
    through the round an instructor runs (README): release, fetch and submit from the Assignments panel, collect,
    the sudo autograde, feedback back, fetched and opened in the student's server, export. Student 2 submits every
    solution; student 1 one wrong answer (the first exercise) in each notebook that has one."""
    k, (s1, s2) = klass, klass.students
    real = [c for c in chapters(k.course / "solutions") if c != CH]
    course = "cd ~/torchcourse && "
    t0 = time.monotonic()
    k.run_as(k.inst, course + " && ".join(f"nbgrader release_assignment {c}" for c in real))
    k.times["every chapter: release"] = time.monotonic() - t0
    names = {c: sorted(p.stem for p in (k.course / "solutions" / c).glob("*.ipynb")) for c in real}
    points, first = {}, {}
    for c in real:
        for name in names[c]:
            pts = grade_points(nbformat.read(str(k.course / "solutions" / c / f"{name}.ipynb"), as_version=4))
            points[c] = points.get(c, 0) + sum(pts.values())
            if pts:
                first[(c, name)] = next(iter(pts))
    expected = {c: {s2: points[c], s1: points[c] - sum(
        grade_points(nbformat.read(str(k.course / "solutions" / c / f"{n}.ipynb"), as_version=4))[first[(c, n)]]
        for n in names[c] if (c, n) in first)} for c in real}

    def student_works(user: str) -> None:
        for c in real:
            k.action(user, "fetch", c)
            for name in names[c]:
                fetched, sol = k.home(user) / c / f"{name}.ipynb", k.course / "solutions" / c / f"{name}.ipynb"
                wrong = {first[(c, name)]} if user == s1 and (c, name) in first else set()
                k.put_notebook(user, f"{c}/{name}.ipynb", submission(fetched, sol, wrong=wrong))
            k.action(user, "submit", c)

    t = time.monotonic()
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(student_works, (s1, s2)))
    k.times["every chapter: fetch, answer, submit (2 students)"] = time.monotonic() - t
    t = time.monotonic()
    collected = k.run_as(k.inst, course + " && ".join(f"python -m grader collect {c}" for c in real))
    k.times["every chapter: collect"] = time.monotonic() - t
    t = time.monotonic()
    graded = {}
    for c in real:
        graded[c] = k.run_as(k.inst, f"sudo -n {k.prefix}/bin/autograde {c}").stdout if shutil.which("sudo") else \
            subprocess.run([str(k.prefix / "bin" / "autograde"), c], capture_output=True, text=True, timeout=900,
                           check=True).stdout
        k.times[f"every chapter: autograde {c} (2 students, sandbox)"] = time.monotonic() - t
        t = time.monotonic()
    t = time.monotonic()
    k.run_as(k.inst, course + " && ".join(f"python -m grader feedback {c} && release-feedback {c} ." for c in real))
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda user: [k.action(user, "fetch_feedback", c) for c in real], (s1, s2)))
    k.run_as(k.inst, course + "nbgrader export")
    k.times["every chapter: feedback back and fetched, export"] = time.monotonic() - t
    text = k.run_as(k.inst, "cat ~/torchcourse/grades.csv").stdout
    exported = {(r["assignment"], r["student_id"]): float(r["score"]) for r in csv.DictReader(io.StringIO(text))}
    k.times["every chapter: the whole round"] = time.monotonic() - t0
    return {"chapters": real, "names": names, "expected": expected, "exported": exported,
            "collected": collected.stdout + collected.stderr, "graded": graded,
            "listing": {u: _assignments_panel(k, u) for u in (s1, s2)}}


def _assignments_panel(k: Klass, user: str) -> dict:
    """What the Assignments panel shows the user, per chapter: its latest submission's feedback state and, opened
    where "view feedback" points, each feedback page's text."""
    web = k.sessions[user]
    listing = web.get(f"{k.server(user)}/assignments", params={"course_id": COURSE_ID}, headers=k.user_xsrf(user),
                      timeout=120).json()
    assert listing["success"], listing
    seen = {}
    for item in listing["value"]:
        if item["status"] != "submitted" or not item["submissions"]:
            continue
        latest = item["submissions"][-1]
        pages = {}
        if latest.get("has_local_feedback") and not latest.get("feedback_updated"):
            folder = latest["local_feedback_path"]
            files = web.get(f"{k.server(user)}/api/contents/{folder}", headers=k.user_xsrf(user), timeout=60).json()
            for f in files.get("content", []):
                if f["name"].endswith(".html"):
                    r = web.get(f"{k.server(user)}/files/{f['path']}", timeout=60)
                    pages[f["name"][:-5]] = (r.status_code, re.sub(r"<[^>]+>", " ", r.text))
        seen[item["assignment_id"]] = {"view_feedback": bool(pages), "pages": pages}
    return seen


def test_every_chapter_goes_through_a_class_round_with_exact_scores(klass, every_chapter):
    r = every_chapter
    assert len(r["chapters"]) >= 4, r["chapters"]  # the course's four, and any chapter added since
    got = {c: {u: r["exported"].get((c, u)) for u in klass.students} for c in r["chapters"]}
    klass.outcomes["every chapter's round: exported scores (student 1 one wrong a notebook, student 2 all right)"] = \
        json.dumps(got)
    why = "\n".join(f"--- {c}\n{out[-1500:]}" for c, out in r["graded"].items())
    assert got == r["expected"], f"{got} != {r['expected']}\n{why}"
    for c in r["chapters"]:
        assert all(f"{c}: {u} -> {u}" in r["collected"] for u in klass.students), r["collected"]


def test_every_chapter_s_feedback_is_offered_and_opens_for_each_student(klass, every_chapter):
    r = every_chapter
    for user in klass.students:
        panel = r["listing"][user]
        for c in r["chapters"]:
            assert c in panel and panel[c]["view_feedback"], (user, c, panel.get(c))
            pages = panel[c]["pages"]
            assert sorted(pages) == r["names"][c], (user, c, sorted(pages))
            score = f"{user}: {r['expected'][c][user]:g} / {r['expected'][c][klass.students[1]]:g} for the chapter"
            for name, (status, text) in pages.items():
                assert status == 200 and score in text, (user, c, name, status, text[:300])
        klass.outcomes[f"{user}'s Assignments panel: view feedback"] = \
            ", ".join(f"{c} ({len(panel[c]['pages'])} pages)" for c in r["chapters"] if c in panel)


ZH_CHAPTER = "02-autograd"


def _start_server(k: Klass, user: str) -> None:
    """Log in, start the user's server through the hub's API and wait until it is ready; then the OAuth dance that
    sets its own cookie and _xsrf."""
    k.login(user)
    t = time.monotonic()
    r = k.sessions[user].post(f"{k.base}/hub/api/users/{user}/server", headers=k.hub_xsrf(user), timeout=60)
    assert r.status_code in (201, 202), f"{user}: spawn {r.status_code} {r.text[:200]}"
    deadline = time.monotonic() + 240
    while not k.sessions[user].get(f"{k.base}/hub/api/user", headers=k.hub_xsrf(user),
                                   timeout=30).json().get("servers", {}).get("", {}).get("ready"):
        assert time.monotonic() < deadline, f"{user}'s server not ready after 240 s\n" + \
            (k.prefix / "state" / "hub.log").read_text()[-3000:]
        time.sleep(0.3)
    k.times[f"server start (student {user}, in Chinese)"] = time.monotonic() - t
    assert k.sessions[user].get(f"{k.server(user)}/lab", timeout=60).status_code == 200


def _lab_locale(k: Klass, user: str) -> str:
    """The interface language JupyterLab in the user's server starts in (its translation setting's default, as the
    server's settings overrides make it, and the user's own setting where she made one)."""
    r = k.sessions[user].get(f"{k.server(user)}/lab/api/settings/@jupyterlab/translation-extension:plugin",
                             timeout=60)
    assert r.status_code == 200, r.text[:300]
    reply = r.json()
    return reply["settings"].get("locale") or reply["schema"]["properties"]["locale"]["default"]


@pytest.fixture(scope="module")
def chinese_round(klass, round_):
    """One chapter in Chinese through the class round: the instructor releases 02-autograd as ever (its Chinese
    notebooks go into the exchange beside the English), the student added with --language zh_CN fetches it from the
    Assignments panel and gets the Chinese notebooks under the English names, answers with the solutions except
    the first exercise of each notebook, and submits; student 1 submits the same answers in English. Collect, the
    sudo autograde, feedback back and fetched, export."""
    k, zh, (s1, _) = klass, klass.zh, klass.students
    c, course = ZH_CHAPTER, "cd ~/torchcourse && "
    t0 = time.monotonic()
    # --force: the every-chapter round may have released it already
    k.run_as(k.inst, course + f"nbgrader release_assignment {c} --force")
    outbound = k.exchange / COURSE_ID / "outbound" / c
    released = {"english": sorted(p.name for p in outbound.glob("*.ipynb")),
                "zh_CN": sorted(p.name for p in (outbound / "zh_CN").glob("*.ipynb"))}
    planted = k.run_as(zh, f"echo '{{}}' > {outbound / 'zh_CN' / 'x.ipynb'}", check=False)
    _start_server(k, zh)
    locales = {u: _lab_locale(k, u) for u in (zh, s1)}
    pack = k.sessions[zh].get(f"{k.server(zh)}/lab/api/translations/zh_CN", timeout=60).json()
    names = sorted(p.stem for p in (k.course / "solutions" / c).glob("*.ipynb"))
    wrong = {}
    for name in names:
        pts = grade_points(nbformat.read(str(k.course / "solutions" / c / f"{name}.ipynb"), as_version=4))
        if pts:
            wrong[name] = next(iter(pts))
    fetched_language = {}

    def student_works(user: str) -> None:
        if not (k.home(user) / c).exists():  # student 1 has it already where the every-chapter round ran
            k.action(user, "fetch", c)
        for name in names:
            fetched, sol = k.home(user) / c / f"{name}.ipynb", k.course / "solutions" / c / f"{name}.ipynb"
            nb = nbformat.read(str(fetched), as_version=4)
            if user == zh:
                fetched_language[name] = nb.metadata.get("torchcourse", {}).get("language")
            k.put_notebook(user, f"{c}/{name}.ipynb", submission(fetched, sol, wrong={wrong[name]} if name in wrong
                                                                 else set()))
        k.action(user, "submit", c)

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(student_works, (zh, s1)))
    folder = sorted(p.name for p in (k.home(zh) / c).iterdir())
    collected = k.run_as(k.inst, course + f"python -m grader collect {c}").stdout
    t = time.monotonic()
    graded = k.run_as(k.inst, f"sudo -n {k.prefix}/bin/autograde {c} --student {zh} --student {s1}").stdout
    k.times[f"chinese round: autograde {c} (one student in Chinese, one in English, sandbox)"] = time.monotonic() - t
    k.run_as(k.inst, course + f"python -m grader feedback {c} && release-feedback {c} .")
    for user in (zh, s1):
        k.action(user, "fetch_feedback", c)
    k.run_as(k.inst, course + "nbgrader export")
    text = k.run_as(k.inst, "cat ~/torchcourse/grades.csv").stdout
    exported = {r["student_id"]: float(r["score"]) for r in csv.DictReader(io.StringIO(text)) if r["assignment"] == c}
    pages = {u: {p.stem: p.read_text(encoding="utf-8") for p in (k.home(u) / c / "feedback").glob("*/*.html")}
             for u in (zh, s1)}
    k.times["chinese round: release to export"] = time.monotonic() - t0
    points = sum(sum(grade_points(nbformat.read(str(k.course / "solutions" / c / f"{n}.ipynb"),
                                                as_version=4)).values()) for n in names)
    expected = points - sum(grade_points(nbformat.read(str(k.course / "solutions" / c / f"{n}.ipynb"),
                                                       as_version=4))[wrong[n]] for n in wrong)
    return {"released": released, "planted": planted, "locales": locales, "pack": pack, "names": names,
            "folder": folder, "fetched_language": fetched_language, "collected": collected, "graded": graded,
            "exported": exported, "pages": pages, "expected": expected, "points": points}


def test_a_student_takes_a_chapter_in_chinese_through_the_class_round(klass, chinese_round):
    r, zh, (s1, _) = chinese_round, klass.zh, klass.students
    notebooks = [f"{n}.ipynb" for n in r["names"]]
    # the release carries the Chinese notebooks beside the English; her fetched folder holds only the Chinese,
    # under the English names (what she submits is the same assignment), and no language folder
    assert r["released"] == {"english": notebooks, "zh_CN": notebooks}, r["released"]
    assert set(r["fetched_language"].values()) == {"zh_CN"}, r["fetched_language"]
    assert [n for n in r["folder"] if n.endswith(".ipynb")] == notebooks and "zh_CN" not in r["folder"], r["folder"]
    # JupyterLab starts in Chinese for her (its language pack); for the others in JupyterLab's default (the browser's)
    assert r["locales"] == {zh: "zh_CN", s1: "default"}, r["locales"]
    # the Chinese notebooks in the exchange are the instructor's alone to write
    assert r["planted"].returncode != 0 and "Permission denied" in r["planted"].stderr, r["planted"]
    assert r["pack"].get("data"), str(r["pack"])[:300]
    assert f"{ZH_CHAPTER}: {zh} -> {zh}" in r["collected"], r["collected"]
    klass.outcomes[f"{ZH_CHAPTER} in Chinese and the same answers in English: exported scores"] = \
        json.dumps({"zh_CN": r["exported"].get(zh), "en": r["exported"].get(s1), "of": r["points"]})
    assert r["exported"].get(zh) == r["exported"].get(s1) == r["expected"] < r["points"], \
        (r["exported"], r["expected"], r["graded"][-3000:])
    # her feedback, fetched through the exchange, is Chinese; the English student's English
    assert sorted(r["pages"][zh]) == r["names"] == sorted(r["pages"][s1]), r["pages"].keys()
    for name, page in r["pages"][zh].items():
        assert "lang='zh-CN'" in page or 'lang="zh-CN"' in page, (name, page[:300])
        assert re.search(r"[\u4e00-\u9fff]{4}", re.sub(r"<[^>]+>", " ", page)), (name, page[:300])
    for name, page in r["pages"][s1].items():
        assert "lang='en'" in page or 'lang="en"' in page, (name, page[:300])
