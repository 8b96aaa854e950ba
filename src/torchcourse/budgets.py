"""What a chapter promises about speed: declared by each chapter package, measured by a benchmark.

Each chapter package (``torchcourse.<name>`` for chapter ``NN-<name>``) sets ``BUDGETS`` in its
``__init__.py``; ``benchmarks/budgets.py --chapter NN-<name>`` reads it, times the chapter's
solution notebooks and its widgets, and prints PASS or FAIL. Nothing here imports a widget:
they are named by module and class, so declaring a budget costs nothing at import time.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class WidgetBudget:
    """One widget: where it lives, which control values the benchmark cycles through, its budget."""

    module: str
    cls: str
    #: {control name: values to cycle through}; None: every option of every selection control.
    values: dict[str, list] | None = None
    #: Median time from a control change to the new figure's PNG.
    update_ms: float = 100.0


@dataclass(frozen=True)
class ChapterBudgets:
    chapter: str
    #: Each solution notebook, run once in a fresh kernel (kernel start included).
    notebook_s: float = 20.0
    widgets: list[WidgetBudget] = field(default_factory=list)
    #: Other figures the chapter reports, as "module:function" names of zero-argument functions that
    #: return {name: number} (e.g. a simulator's throughput); printed, not judged.
    probes: list[str] = field(default_factory=list)


def package_for(chapter: str) -> str:
    """``01-tensors`` -> ``torchcourse.tensors``: the chapter's package shares its name."""
    return "torchcourse." + chapter.split("-", 1)[1].replace("-", "_")
