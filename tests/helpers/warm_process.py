"""Run a script in a fresh `python -I` process that has loaded the sandbox worker's package (grader/inside/) as
the sandbox does, with the plain environment the sandbox gives the worker: for what needs the warm process
(its preload, shell, guard). The script finds the package as `inside`, with `base`, `shell`, `guard`,
`confine` and `child` imported. What needs none of that (`channel`, `cleanup`) a test imports itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

INSIDE = Path(__file__).resolve().parents[2] / "grader" / "inside"
LOAD = (  # what the sandbox's `python -I <folder>` does (grader/inside/__main__.py), up to the main loop
    "import importlib.util, os, sys\n"
    "_spec = importlib.util.spec_from_file_location('inside', os.path.join(sys.argv[1], '__init__.py'),\n"
    "                                               submodule_search_locations=[sys.argv[1]])\n"
    "sys.modules['inside'] = importlib.util.module_from_spec(_spec)\n"
    "_spec.loader.exec_module(sys.modules['inside'])\n"
    "import inside.base, inside.shell, inside.guard, inside.confine, inside.child\n"
)


def run_in_warm_process(script: str, tmp_path: Path, timeout: float = 300, preload: str | None = None
                        ) -> subprocess.CompletedProcess:
    """`preload`: the worker's TORCHCOURSE_PRELOAD (unset, it imports the whole course library)."""
    path = tmp_path / "script.py"
    path.write_text(LOAD + script)
    env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)}
    if preload is not None:
        env["TORCHCOURSE_PRELOAD"] = preload
    return subprocess.run([sys.executable, "-I", str(path), str(INSIDE)], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=tmp_path)
