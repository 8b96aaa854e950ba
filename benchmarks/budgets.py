"""A chapter's speed budgets, as its package declares them: prints numbers and PASS/FAIL; not a test.

Each chapter package (``torchcourse.<name>`` for ``NN-<name>``) sets ``BUDGETS`` in its
``__init__.py`` (see ``torchcourse.budgets``):

1. Each solution notebook of the chapter, executed once in a fresh kernel with nbclient: wall time
   under the chapter's ``notebook_s`` (kernel start included), and the time its cells took.
2. Each declared widget: a control value changed N times; the median time from the change to the
   new figure's PNG (what a learner waits for) under the widget's ``update_ms``.

    .venv/bin/python benchmarks/budgets.py --chapter 01-tensors [--repeats 20] [--no-notebooks] [--no-widgets]
    .venv/bin/python benchmarks/budgets.py            # every chapter that has solution notebooks

Timings depend on the machine's load: run it on an idle machine (the budgets assume 2 cores).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import statistics
import sys
import tempfile
import time
from datetime import datetime
from itertools import cycle, islice
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def chapter_budgets(chapter: str):
    """The chapter package's declared budgets (a default, with no widgets, when it declares none)."""
    from torchcourse.budgets import ChapterBudgets, package_for

    try:
        module = importlib.import_module(package_for(chapter))
    except ImportError as exc:
        print(f"  note: {package_for(chapter)} is not importable ({exc}); default budgets")
        return ChapterBudgets(chapter=chapter)
    return getattr(module, "BUDGETS", None) or ChapterBudgets(chapter=chapter)


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _cell_seconds(nb) -> float:
    """Sum of the cells' own run times, from the timestamps nbclient records in cell metadata."""
    total = 0.0
    for cell in nb.cells:
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            total += (datetime.fromisoformat(end.replace("Z", "+00:00"))
                      - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
    return total


def bench_notebooks(chapter: str, budget_s: float) -> bool:
    import nbformat
    from nbclient import NotebookClient

    ok_all = True
    paths = sorted((ROOT / "solutions" / chapter).glob("*.ipynb"))
    print(f"Notebooks of {chapter}: each executed once in a fresh kernel (budget < {budget_s:.0f} s)")
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        slowest = (0.0, -1)
        with tempfile.TemporaryDirectory() as workdir:
            client = NotebookClient(nb, kernel_name="python3", timeout=120, allow_errors=True,
                                    resources={"metadata": {"path": workdir}})
            start = time.perf_counter()
            try:
                with client.setup_kernel():
                    for index, cell in enumerate(nb.cells):
                        began = time.perf_counter()
                        client.execute_cell(cell, index)
                        slowest = max(slowest, (time.perf_counter() - began, index))
                error = ""
            except Exception as exc:  # a broken notebook is a failed budget, not a crashed script
                error = f" ({type(exc).__name__}: {exc})"
            wall = time.perf_counter() - start
        # Check cells are tagged raises-exception; only errors elsewhere count as breakage.
        broken = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                  and any(o.output_type == "error" for o in c.get("outputs", []))
                  and "raises-exception" not in c.metadata.get("tags", [])]
        ok = wall < budget_s and not error and not broken
        ok_all &= ok
        note = f" errors in cells {broken}" if broken else error
        print(f"  {verdict(ok)}  {path.name:45} {wall:6.1f} s wall, {_cell_seconds(nb):5.1f} s in cells, "
              f"slowest cell {slowest[1]} ({slowest[0]:.1f} s){note}")
    return ok_all


def _find_widget(module_name: str, class_name: str):
    """The widget class, or None when its module is not there yet (another author may still write it)."""
    from torchcourse.widgets import Explorer

    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        print(f"  SKIP  {module_name}: not importable ({exc})")
        return None
    cls = getattr(module, class_name, None)
    if cls is None:  # renamed: take the module's own Explorer subclass
        found = [v for v in vars(module).values()
                 if isinstance(v, type) and issubclass(v, Explorer) and v is not Explorer
                 and v.__module__ == module.__name__]
        cls = found[0] if found else None
    if cls is None:
        print(f"  SKIP  {module_name}: no Explorer subclass")
    return cls


def _settings(widget, values: dict | None) -> list[tuple[str, object]]:
    """(control, value) changes, alternating controls so every change is a real change."""
    if values is None:  # ipywidgets keeps a selection widget's values (not its labels) here
        values = {name: list(control._options_values) for name, control in widget.controls.items()
                  if getattr(control, "_options_values", None)}
    return [(name, v) for name, vs in values.items() for v in vs]


def bench_widgets(widgets: list, repeats: int) -> bool:
    from torchcourse.widgets import figure_png

    ok_all = True
    print(f"Widgets: median of {repeats} control changes, change to new PNG")
    for spec in widgets:
        module_name, class_name, values, budget_ms = spec.module, spec.cls, spec.values, spec.update_ms
        cls = _find_widget(module_name, class_name)
        if cls is None:
            continue
        # Outside a kernel the wrapper's display() prints a repr; keep the report readable.
        with contextlib.redirect_stdout(io.StringIO()):
            widget = cls()
            changes = _settings(widget, values)
            figure_png(widget.figure)  # warm-up: fonts and caches, as after the first draw in a notebook
            times, cpu = [], []
            for name, value in islice(cycle(changes), repeats):
                control = widget.controls[name]
                if control.value == value:  # a no-op change would not redraw; skip it
                    continue
                start, start_cpu = time.perf_counter(), time.process_time()
                control.value = value
                figure_png(widget.figure)
                times.append((time.perf_counter() - start) * 1000)
                cpu.append((time.process_time() - start_cpu) * 1000)
        if not times:
            print(f"  SKIP  {cls.__name__}: no control value to change")
            continue
        median = statistics.median(times)
        ok = median < budget_ms
        ok_all &= ok
        # The CPU time beside it: on a busy machine the wall time mostly measures the wait for a core.
        print(f"  {verdict(ok)}  {cls.__name__:45} median {median:6.1f} ms (budget {budget_ms:.0f}), "
              f"max {max(times):6.1f} ms over {len(times)} changes; CPU median {statistics.median(cpu):6.1f} ms")
    return ok_all


def run_probes(probes: list[str]) -> None:
    """Print what each declared probe measures ("module:function" returning {name: number})."""
    for name in probes:
        module_name, _, func = name.partition(":")
        start = time.perf_counter()
        figures = getattr(importlib.import_module(module_name), func)()
        shown = ", ".join(f"{k} {v:,.4g}" for k, v in figures.items())
        print(f"  probe {name}: {shown} ({time.perf_counter() - start:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chapter", action="append", help="e.g. 02-autograd (repeatable; default: every chapter)")
    parser.add_argument("--repeats", type=int, default=20, help="control changes per widget (default 20)")
    parser.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    parser.add_argument("--no-widgets", action="store_true", help="skip the widget updates")
    args = parser.parse_args(argv)
    chapters = args.chapter or sorted(p.parent.name for p in (ROOT / "solutions").glob("*/*.ipynb"))
    results = []
    for chapter in dict.fromkeys(chapters):
        print(f"== {chapter}")
        budgets = chapter_budgets(chapter)
        if not args.no_notebooks:
            results.append(bench_notebooks(chapter, budgets.notebook_s))
        if not args.no_widgets:
            results.append(bench_widgets(budgets.widgets, args.repeats))
        run_probes(budgets.probes)
    print("All budgets met." if all(results) else "Some budgets missed (see FAIL above).")
    return 0  # a report, not a test: the exit status does not judge


if __name__ == "__main__":
    sys.exit(main())
