"""A real Dask cluster for tests, started as an instructor starts one: `dask scheduler` and `dask worker` from
the virtual environment's own command line, TLS with the course's certificates, each worker in a working
directory of its own running the grader installed there (a copy of this checkout's grader and lock file on
its PYTHONPATH), never a path the grader sends."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.course import REPO

DASK = str(Path(sys.executable).with_name("dask"))


def install_course(dest: Path, commit: str) -> Path:
    """The course as a worker machine holds it: the grader package and the lock file (the library and its
    dependencies are the virtual environment's), built from `commit`."""
    shutil.copytree(REPO / "grader", dest / "grader", ignore=shutil.ignore_patterns("__pycache__"))
    (dest / "requirements").mkdir(parents=True)
    shutil.copy(REPO / "requirements" / "lock.txt", dest / "requirements" / "lock.txt")
    (dest / "COMMIT").write_text(commit)
    return dest


class Cluster:
    def __init__(self, base: Path, certs: Path, allowed_failures: str | None = "0") -> None:
        self.base, self.certs = base, certs
        self.procs: dict[str, subprocess.Popen] = {}
        self.logs: dict[str, Path] = {}
        self.commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                                     text=True, check=True).stdout.strip()
        sched_file = base / "scheduler.json"
        # The scheduler unpickles each task (its function by reference): it has the course installed too.
        install = install_course(base / "scheduler-install", self.commit)
        env = self._env(install)
        if allowed_failures is not None:  # None: Dask's default, as a scheduler started without the README's
            env["DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES"] = allowed_failures
        self._start("scheduler", [DASK, "scheduler", "--protocol", "tls", "--host", "127.0.0.1", "--port", "0",
                                  "--no-dashboard", "--scheduler-file", str(sched_file), *self._tls("scheduler")],
                    base, env)
        deadline = time.monotonic() + 60
        while not sched_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sched_file.exists(), self.log("scheduler")
        time.sleep(0.2)  # written whole before it is renamed? read until it parses
        self.address = json.loads(sched_file.read_text())["address"]

    def _tls(self, role: str) -> list[str]:
        return ["--tls-ca-file", str(self.certs / "ca.pem"), "--tls-cert", str(self.certs / f"{role}.pem"),
                "--tls-key", str(self.certs / f"{role}.key")]

    def _start(self, name: str, cmd: list[str], cwd: Path, env: dict) -> None:
        self.logs[name] = cwd / f"{name}.log"
        with open(self.logs[name], "wb") as log:
            self.procs[name] = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                start_new_session=True)

    @staticmethod
    def _env(install: Path) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        env.update(PYTHONPATH=str(install), TORCHCOURSE_COMMIT=(install / "COMMIT").read_text())
        return env

    def log(self, name: str) -> str:
        return self.logs[name].read_text(errors="replace")[-3000:]

    def add_worker(self, name: str, commit: str | None = None) -> Path:
        """A single-threaded worker in base/<name>/ running base/<name>/install, built from `commit` (the
        grader's, unless given)."""
        home = self.base / name
        home.mkdir()
        install = install_course(home / "install", commit or self.commit)
        env = self._env(install)
        self._start(name, [DASK, "worker", self.address, "--name", name, "--nthreads", "1", "--no-nanny",
                           "--no-dashboard", "--local-directory", str(home / "dask"), *self._tls("worker")],
                    home, env)
        return install

    def wait_for(self, n: int, timeout: float = 120) -> None:
        from grader.cluster import connect

        with connect(self.address, str(self.certs)) as client:
            try:
                client.wait_for_workers(n, timeout=timeout)
            except Exception as exc:
                raise AssertionError(f"{exc}\n" + "\n".join(f"{k}: {self.log(k)}" for k in self.procs)) from None

    def kill(self, name: str) -> None:
        """SIGKILL the process and everything it started (a machine lost)."""
        p = self.procs.pop(name)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()

    def close(self) -> None:
        for name in list(self.procs):
            self.kill(name)
