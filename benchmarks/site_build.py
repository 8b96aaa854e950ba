"""Site budgets: cold build, rebuild after touching / editing one notebook, browser tests.

Budgets: cold build of the whole learner site < 2 min, rebuild after touching one notebook < 30 s,
browser tests < 3 min, all on the 2-core development machine.

The builds run on a throw-away copy of the book's sources (chapters/, book/, configs), so the
"edit one notebook" step never touches the repository. Prints one line per measurement.

    .venv/bin/python benchmarks/site_build.py [--skip-browser]
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
BUDGETS = {"cold build": 120.0, "rebuild, one notebook touched": 30.0,
           "rebuild, one notebook's code edited": 30.0, "browser tests": 180.0}
COPY = ["_config.yml", "_toc.yml", "book", "chapters"]


def build(src: Path, out: Path, *extra: str) -> tuple[float, str]:
    start = time.perf_counter()
    command = [str(BIN / "jupyter-book"), "build", str(src), "-W", "--keep-going", "--path-output", str(out), *extra]
    run = subprocess.run(command, cwd=src, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    log = re.sub(r"\x1b\[[0-9;]*m", "", run.stdout + run.stderr)
    if run.returncode != 0:
        sys.exit(f"build failed:\n{log[-4000:]}")
    return seconds, log


def executed(log: str) -> list[str]:
    return [Path(m).name for m in re.findall(r"(\S+\.ipynb): Executing notebook", log)]


def report(name: str, seconds: float, note: str = "") -> None:
    budget = BUDGETS[name]
    verdict = "ok" if seconds <= budget else "OVER BUDGET"
    print(f"{name:38s} {seconds:7.1f} s   budget {budget:5.0f} s   {verdict}  {note}", flush=True)


def main() -> None:
    subprocess.run(["make", "-s", "vendor"], cwd=ROOT, check=True)
    work = Path(tempfile.mkdtemp(prefix="site-bench-"))
    try:
        src, out = work / "src", work / "out"
        src.mkdir()
        for name in COPY:
            (shutil.copytree if (ROOT / name).is_dir() else shutil.copy2)(ROOT / name, src / name)
        notebooks = sorted(p for p in (src / "chapters").glob("*/*.ipynb"))
        print(f"{len(notebooks)} notebooks, {os.cpu_count()} cores", flush=True)

        seconds, log = build(src, out)
        report("cold build", seconds, f"executed {len(executed(log))} notebooks")

        target = notebooks[-1]
        target.touch()
        seconds, log = build(src, out)
        report("rebuild, one notebook touched", seconds, f"re-executed {executed(log) or 'none (same code)'}")

        nb = json.loads(target.read_text(encoding="utf-8"))
        code = next(c for c in nb["cells"] if c["cell_type"] == "code")
        code["source"] = "".join(code["source"]) + "\n# benchmark edit"
        target.write_text(json.dumps(nb, ensure_ascii=False, indent=1), encoding="utf-8")
        seconds, log = build(src, out)
        report("rebuild, one notebook's code edited", seconds, f"re-executed {executed(log)}")

        if "--skip-browser" not in sys.argv:
            # The browser tests on the repository's own builds (learner and instructor), timed alone.
            repo_out, instructor_out = work / "repo", work / "instructor"
            build(ROOT, repo_out)
            toc = instructor_out / "_toc.yml"
            subprocess.run([str(BIN / "python"), "book/instructor_toc.py", str(toc)], cwd=ROOT, check=True)
            build(ROOT, instructor_out, "--config", "_config_instructor.yml", "--toc", str(toc))
            env = dict(os.environ, TORCHCOURSE_PREBUILT_SITE=str(repo_out),
                       TORCHCOURSE_PREBUILT_INSTRUCTOR_SITE=str(instructor_out))
            start = time.perf_counter()
            run = subprocess.run([str(BIN / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/browser"],
                                 cwd=ROOT, env=env, capture_output=True, text=True)
            summary = (run.stdout.strip().splitlines() or ["?"])[-1]
            report("browser tests", time.perf_counter() - start, summary)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
