"""The worker's main loop: ``python -I <this folder>`` inside the sandbox.

Python runs this file with the folder itself first on sys.path. The folder is imported as the package it is,
under the name ``inside`` (its modules import one another relatively), and taken off sys.path again, so that
sys.path is what ``python -I`` gives a single file: nothing of the folder importable by a bare name.
"""

import importlib.util
import os
import sys

_folder = sys.path.pop(0)
_spec = importlib.util.spec_from_file_location("inside", os.path.join(_folder, "__init__.py"),
                                               submodule_search_locations=[_folder])
sys.modules["inside"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sys.modules["inside"])

import json  # noqa: E402
import signal  # noqa: E402

from inside.base import PRELOAD_ERRORS, torch  # noqa: E402  (first: the warm process, as before any other)
from inside.child import settle  # noqa: E402
from inside.confine import PR_SET_PDEATHSIG, _job_namespaces_here, _keep_to_cpu, _libc, _oom_score  # noqa: E402
from inside.guard import _snapshot  # noqa: E402
from inside.parent import run_job  # noqa: E402
from inside.shell import make_shell  # noqa: E402
from inside.templates import Templates  # noqa: E402


def main() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the grader died: so do we
    _oom_score("-1000")  # when a submission's cgroup runs out of memory, the kernel kills the job, not us
    _keep_to_cpu(os.environ.get("TORCHCOURSE_WORKER_CPU"), os.environ.get("TORCHCOURSE_JOBS_ON_WORKER_CPU") == "1")
    shell = make_shell()
    snap = _snapshot()
    job_ns = _job_namespaces_here()
    settle()
    out = sys.stdout
    out.write(json.dumps({"ready": True, "pid": os.getpid(), "uid": os.getuid(), "torch": torch.__version__,
                          "preload_errors": PRELOAD_ERRORS, "job_ns": job_ns}) + "\n")
    out.flush()
    templates = Templates()
    for line in sys.stdin:
        if not line.strip():
            continue
        spec = json.loads(line)
        try:
            reply = run_job(shell, spec, snap, templates)
        except Exception as exc:  # a broken job must not take the worker down
            reply = {"id": spec.get("id"), "status": "worker_error", "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
