"""Chapter 1's speed budgets (issue 3): prints numbers and PASS/FAIL; it is not a test.

1. Each chapter-1 solution notebook, executed once in a fresh kernel with nbclient: wall time
   under 20 s (kernel start included), and the time its cells took.
2. Each widget in ``torchcourse.tensors``: a control value changed N times; the median time from
   the change to the new figure's PNG (what a learner waits for) under 100 ms.

    .venv/bin/python benchmarks/chapter1_budgets.py [--repeats 20] [--no-notebooks] [--no-widgets]

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
NOTEBOOK_BUDGET_S = 20.0
UPDATE_BUDGET_MS = 100.0

# (module, class, {control: values to cycle through}); None: every option of every control that has options.
WIDGETS = [
    ("torchcourse.tensors.ranks", "RankGallery", {"rank": [0, 1, 2, 3, 4, 5]}),
    ("torchcourse.tensors.broadcast", "BroadcastExplorer",
     {"text_a": ["3, 1", "2, 1, 3", "2, 3", "5, 1, 4, 1"], "text_b": ["4", "4, 1", "2", "3, 1, 7", "6, 5"]}),
    ("torchcourse.tensors.memory", "MemoryExplorer", None),
]


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


def bench_notebooks() -> bool:
    import nbformat
    from nbclient import NotebookClient

    ok_all = True
    paths = sorted((ROOT / "solutions" / "01-tensors").glob("*.ipynb"))
    print(f"Notebooks: each executed once in a fresh kernel (budget < {NOTEBOOK_BUDGET_S:.0f} s)")
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
        ok = wall < NOTEBOOK_BUDGET_S and not error and not broken
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


def bench_widgets(repeats: int) -> bool:
    from torchcourse.widgets import figure_png

    ok_all = True
    print(f"Widgets: median of {repeats} control changes, change to new PNG (budget < {UPDATE_BUDGET_MS:.0f} ms)")
    for module_name, class_name, values in WIDGETS:
        cls = _find_widget(module_name, class_name)
        if cls is None:
            continue
        # Outside a kernel the wrapper's display() prints a repr; keep the report readable.
        with contextlib.redirect_stdout(io.StringIO()):
            widget = cls()
            changes = _settings(widget, values)
            figure_png(widget.figure)  # warm-up: fonts and caches, as after the first draw in a notebook
            times = []
            for name, value in islice(cycle(changes), repeats):
                control = widget.controls[name]
                if control.value == value:  # a no-op change would not redraw; skip it
                    continue
                start = time.perf_counter()
                control.value = value
                figure_png(widget.figure)
                times.append((time.perf_counter() - start) * 1000)
        if not times:
            print(f"  SKIP  {cls.__name__}: no control value to change")
            continue
        median = statistics.median(times)
        ok = median < UPDATE_BUDGET_MS
        ok_all &= ok
        print(f"  {verdict(ok)}  {cls.__name__:45} median {median:6.1f} ms, max {max(times):6.1f} ms "
              f"over {len(times)} changes")
    return ok_all


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=20, help="control changes per widget (default 20)")
    parser.add_argument("--no-notebooks", action="store_true", help="skip executing the notebooks")
    parser.add_argument("--no-widgets", action="store_true", help="skip the widget updates")
    args = parser.parse_args(argv)
    results = []
    if not args.no_notebooks:
        results.append(bench_notebooks())
    if not args.no_widgets:
        results.append(bench_widgets(args.repeats))
    print("All budgets met." if all(results) else "Some budgets missed (see FAIL above).")
    return 0  # a report, not a test: the exit status does not judge


if __name__ == "__main__":
    sys.exit(main())
