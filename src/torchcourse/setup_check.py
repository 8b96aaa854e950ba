"""Make sure the JupyterLab extensions the course needs are installed and enabled, and that
JupyterLab asks a learner nothing the course does not need.

Run by `make` after installing: nbgrader's assignment list and validate button, and the
ipywidgets manager that draws the course's widgets; JupyterLab's "official Jupyter news"
prompt and update check are switched off in the environment's settings overrides.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LAB_EXTENSIONS = ["@jupyter/nbgrader", "@jupyter-widgets/jupyterlab-manager"]
SERVER_EXTENSIONS = [
    "nbgrader.server_extensions.formgrader",
    "nbgrader.server_extensions.assignment_list",
    "nbgrader.server_extensions.course_list",
    "nbgrader.server_extensions.validate_assignment",
]


# JupyterLab reads default overrides from <sys.prefix>/share/jupyter/lab/settings/overrides.json.
LAB_OVERRIDES = {"@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}}


def write_lab_overrides(prefix: Path = Path(sys.prefix)) -> Path:
    """Merge the course's settings into the environment's overrides.json (other keys are kept)."""
    path = prefix / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    try:
        current = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        current = {}
    for plugin, values in LAB_OVERRIDES.items():
        current.setdefault(plugin, {}).update(values)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(current, indent=2) + "\n", encoding="utf-8")
    return path


def _jupyter(*args: str) -> str:
    exe = str(Path(sys.executable).with_name("jupyter"))
    done = subprocess.run([exe, *args], capture_output=True, text=True)
    return done.stdout + done.stderr


def enabled_lab_extensions() -> set[str]:
    found = set()
    for line in _jupyter("labextension", "list").splitlines():
        parts = line.split()
        if len(parts) >= 3 and "enabled" in line and "OK" in line:
            found.add(parts[0])
    return found


def enabled_server_extensions() -> set[str]:
    found = set()
    for line in _jupyter("server", "extension", "list").splitlines():
        parts = line.split()
        if len(parts) >= 2 and "enabled" in parts[1]:
            found.add(parts[0])
    return found


def main() -> int:
    write_lab_overrides()
    for ext in SERVER_EXTENSIONS:
        if ext not in enabled_server_extensions():
            _jupyter("server", "extension", "enable", "--sys-prefix", ext)
    for ext in LAB_EXTENSIONS:
        if ext not in enabled_lab_extensions():
            _jupyter("labextension", "enable", ext)
    missing = [e for e in LAB_EXTENSIONS if e not in enabled_lab_extensions()]
    missing += [e for e in SERVER_EXTENSIONS if e not in enabled_server_extensions()]
    if missing:
        print("These JupyterLab extensions could not be enabled: " + ", ".join(missing), file=sys.stderr)
        return 1
    print("JupyterLab extensions enabled: " + ", ".join(LAB_EXTENSIONS + SERVER_EXTENSIONS))
    return 0


if __name__ == "__main__":
    sys.exit(main())
