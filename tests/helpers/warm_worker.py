"""Run a script against the warm worker's module (grader/warm_worker.py) in a fresh `python -I` process, with
the plain environment the sandbox gives the worker; the script finds the module loaded as `w`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

WORKER = Path(__file__).resolve().parents[2] / "grader" / "warm_worker.py"
LOAD = (  # what the sandbox runs as a script, loaded as a module so the script can reach its functions
    "import importlib.util, sys\n"
    "spec = importlib.util.spec_from_file_location('warm_worker', sys.argv[1])\n"
    "w = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(w)\n"
)


def run_with_worker(script: str, tmp_path: Path, timeout: float = 300, preload: str | None = None
                    ) -> subprocess.CompletedProcess:
    """`preload`: the worker's TORCHCOURSE_PRELOAD (unset, it imports the whole course library)."""
    path = tmp_path / "script.py"
    path.write_text(LOAD + script)
    env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)}
    if preload is not None:
        env["TORCHCOURSE_PRELOAD"] = preload
    return subprocess.run([sys.executable, "-I", str(path), str(WORKER)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=tmp_path)
