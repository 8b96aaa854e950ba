"""One place decides versions: requirements/lock.txt; environment.yml must carry the same pins."""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _lock() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "requirements" / "lock.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"lock.txt line {line!r} is not an exact pin"
            pins[name.lower().replace("_", "-")] = version
    return pins


def test_environment_yml_has_exactly_the_lock_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    conda_pins = {}
    for item in pip_section:
        if item.startswith("-"):
            continue
        name, _, version = item.partition("==")
        conda_pins[name.lower().replace("_", "-")] = version
    assert conda_pins == _lock()
    assert "python=3.11" in env["dependencies"]


def test_torch_and_the_course_stack_are_pinned_as_the_guide_requires():
    pins = _lock()
    assert pins["torch"] == "2.13.0"
    assert pins["nbgrader"] == "0.9.6"
    assert pins["ipywidgets"].startswith("8.")
    assert pins["jupyterlab"].startswith("4.")
    assert re.match(r"1\.", pins["jupyter-book"])


def _setup_commands(*args: str) -> str:
    import subprocess

    done = subprocess.run(["make", "-n", "-W", "requirements/lock.txt", "setup", *args], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return done.stdout


def test_cpu_only_torch_is_an_opt_in_of_the_same_pinned_version():
    """`make lab TORCH_INDEX=...` installs the lock's torch pin from that index first; by default the lock
    alone decides (a dry run: make prints the commands it would run)."""
    default = _setup_commands()
    assert "--index-url" not in default and "-q install -r requirements/lock.txt" in default
    cpu = _setup_commands("TORCH_INDEX=https://download.pytorch.org/whl/cpu")
    first = cpu.index('install --index-url https://download.pytorch.org/whl/cpu "torch==2.13.0"')
    assert first < cpu.index("install -r requirements/lock.txt")
