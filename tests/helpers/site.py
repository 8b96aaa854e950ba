"""Build the learner and instructor sites once per test session, and serve a built site.

Shared by tests/site and tests/browser (both conftests load this one module), so a session
that runs both builds each site once. Builds go to a throw-away folder with a cold execution
cache, exactly as `make book` / `make book-instructor` build them (same configs, same -W).
The learner site is book/build_site.py's: English in <out>/_build/html/en, and, only when a test asks
for it, Chinese in <out>/_build/html/zh from the same execution cache. The tests' Chinese site carries
ZH_TEST_CHAPTER whether or not it is released, English where a message has no translation yet (the
committed site never does that): a Chinese notebook page exists before any chapter is released.
TORCHCOURSE_PREBUILT_SITE=<out of a learner build> (and TORCHCOURSE_PREBUILT_INSTRUCTOR_SITE
for the instructor build) reuse finished builds instead: benchmarks/site_build.py uses them to
time the browser tests alone.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".venv" / "bin"
_WORK = Path(tempfile.mkdtemp(prefix="torchcourse-site-"))
atexit.register(shutil.rmtree, _WORK, ignore_errors=True)


#: The chapter in the tests' Chinese site (four notebooks, with players and exercises).
ZH_TEST_CHAPTER = "04-hardware"


@dataclass(frozen=True)
class Site:
    out: Path  # --path-output: html in out/_build/html, execution cache in out/_build/.jupyter_cache
    log: str
    seconds: float
    language: str = ""  # the learner site's: its pages are in out/_build/html/<language>

    @property
    def html(self) -> Path:
        return self.out / "_build" / "html" / self.language


class BuildError(RuntimeError):
    pass


def vendor() -> None:
    """`make vendor`: npm ci when needed, then copy the site's JavaScript into book/_vendor.

    Under a lock: the two sites may build on two pytest-xdist workers at once, and two `npm ci` in one
    folder break each other."""
    with open(ROOT / "node_modules.lock", "a") as lock:  # beside node_modules/, gitignored
        fcntl.flock(lock, fcntl.LOCK_EX)
        run = subprocess.run(["make", "-s", "vendor"], cwd=ROOT, capture_output=True, text=True)
    if run.returncode != 0:
        raise BuildError(f"make vendor failed (rc {run.returncode}):\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}")


def jupyter_book(out: Path, *extra: str, root: Path = ROOT) -> Site:
    """One `jupyter-book build . -W --keep-going` of the course folder ``root`` into ``out``; raises with the log
    on failure."""
    start = time.perf_counter()
    run = subprocess.run([str(BIN / "jupyter-book"), "build", ".", "-W", "--keep-going", "--path-output", str(out),
                          *extra], cwd=root, capture_output=True, text=True)
    log = run.stdout + run.stderr
    if run.returncode != 0:
        raise BuildError(f"jupyter-book build failed (rc {run.returncode}):\n{log[-6000:]}")
    return Site(out, log, time.perf_counter() - start)


def learner_build(out: Path, language: str) -> Site:
    """One language of `make book` (book/build_site.py) into ``out``/_build; raises with the log on failure."""
    start = time.perf_counter()
    run = subprocess.run([str(BIN / "python"), "book/build_site.py", "--out", str(out / "_build"), "--language",
                          language, f"--zh-chapters={ZH_TEST_CHAPTER}", "--fallback"],
                         cwd=ROOT, capture_output=True, text=True)
    log = run.stdout + run.stderr
    if run.returncode != 0:
        raise BuildError(f"book/build_site.py --language {language} failed (rc {run.returncode}):\n{log[-6000:]}")
    return Site(out, log, time.perf_counter() - start, language)


_sites: dict[str, Site] = {}


def learner_site() -> Site:
    if "learner" not in _sites:
        prebuilt = os.environ.get("TORCHCOURSE_PREBUILT_SITE")
        if prebuilt:
            _sites["learner"] = Site(Path(prebuilt), "", 0.0, "en")
        else:
            vendor()
            _sites["learner"] = learner_build(_WORK / "learner", "en")
    return _sites["learner"]


def chinese_site() -> Site:
    """The learner site in Chinese, built after the English one into the same folder, from its executions."""
    if "chinese" not in _sites:
        english = learner_site()
        if not english.log:  # prebuilt: its Chinese is there too
            _sites["chinese"] = Site(english.out, "", 0.0, "zh")
        else:
            _sites["chinese"] = learner_build(english.out, "zh")
    return _sites["chinese"]


def instructor_site() -> Site:
    if "instructor" not in _sites:
        prebuilt = os.environ.get("TORCHCOURSE_PREBUILT_INSTRUCTOR_SITE")
        if prebuilt:
            _sites["instructor"] = Site(Path(prebuilt), "", 0.0)
            return _sites["instructor"]
        vendor()
        toc = _WORK / "instructor" / "_toc.yml"
        subprocess.run([str(BIN / "python"), "book/instructor_toc.py", str(toc)], cwd=ROOT, check=True)
        _sites["instructor"] = jupyter_book(_WORK / "instructor", "--config", "_config_instructor.yml",
                                            "--toc", str(toc))
    return _sites["instructor"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """Serve ``directory`` on a free loopback port; yields the base URL (ending in /)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                             "--directory", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"http.server on port {port} exited with {proc.returncode} (port taken?)")
            try:
                with urllib.request.urlopen(base + "index.html", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=10)
