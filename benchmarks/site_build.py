"""Site budgets: cold build, both languages against English alone, rebuild after touching / editing one
notebook, browser tests.

Budgets: cold build of the whole English learner site < 2 min; `make book`'s two languages (book/build_site.py)
cold < 1.5 times English alone, since the Chinese build reuses the English build's executions; rebuild after
touching one notebook < 30 s; browser tests < 3 min, all on the 2-core development machine.

The builds run on a throw-away copy of the book's sources (chapters/, book/, configs, catalogs), so the
"edit one notebook" step never touches the repository. The two-language build puts every chapter in the Chinese
site (English where a message has no translation yet), as `make book` will once every chapter is released.
Prints one line per measurement.

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
sys.path.insert(0, str(ROOT))
BIN = ROOT / ".venv" / "bin"
BUDGETS = {"cold build": 120.0, "rebuild, one notebook touched": 30.0,
           "rebuild, one notebook's code edited": 30.0, "browser tests": 180.0}
#: Both languages cold, against English alone cold.
LANGUAGES_RATIO = 1.5
COPY = ["_config.yml", "_toc.yml", "book", "chapters", "locale", "zh_CN"]


def build(src: Path, out: Path, *extra: str) -> tuple[float, str]:
    """`make book` (book/build_site.py) of the sources in ``src`` into ``out``/_build."""
    start = time.perf_counter()
    command = [str(BIN / "python"), str(src / "book" / "build_site.py"), "--out", str(out / "_build"), *extra]
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
        print(f"{len(notebooks)} notebooks, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)
        every_chapter = "--zh-chapters=" + ",".join(sorted({nb.parent.name for nb in notebooks}))

        english, log = build(src, work / "english", "--language", "en")
        report("cold build", english, f"English alone; executed {len(executed(log))} notebooks")
        both, log = build(src, out, every_chapter, "--fallback")
        chinese = re.findall(r"zh-src/chapters/\S+\.ipynb: Using cached notebook", log)
        # Within this one run, the two languages' builds one after the other: their ratio is the Chinese build's
        # cost, far less at the mercy of a shared machine's load than two cold builds minutes apart.
        parts = dict(re.findall(r"book/build_site\.py: (\w+) site built in ([\d.]+) s", log))
        ratio = both / english
        within = (float(parts["en"]) + float(parts["zh"])) / float(parts["en"])
        print(f"{'cold build, English and Chinese':38s} {both:7.1f} s   {ratio:.2f} x English alone (budget "
              f"{LANGUAGES_RATIO} x)   {'ok' if max(ratio, within) <= LANGUAGES_RATIO else 'OVER BUDGET'}  "
              f"English {parts['en']} s then Chinese {parts['zh']} s: {within:.2f} x; executed "
              f"{len(executed(log))} notebooks; the Chinese build took {len(chinese)} from the cache; "
              f"load {os.getloadavg()[0]:.1f}", flush=True)

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
            from tests.helpers.site import ZH_TEST_CHAPTER  # the Chinese site the browser tests expect

            build(ROOT, repo_out, f"--zh-chapters={ZH_TEST_CHAPTER}", "--fallback")
            toc = instructor_out / "_toc.yml"
            subprocess.run([str(BIN / "python"), "book/instructor_toc.py", str(toc)], cwd=ROOT, check=True)
            run = subprocess.run([str(BIN / "jupyter-book"), "build", ".", "-W", "--keep-going", "--path-output",
                                  str(instructor_out), "--config", "_config_instructor.yml", "--toc", str(toc)],
                                 cwd=ROOT, capture_output=True, text=True)
            if run.returncode != 0:
                sys.exit(f"instructor build failed:\n{(run.stdout + run.stderr)[-4000:]}")
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
