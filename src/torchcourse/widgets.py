"""The wrapper layer shared by every widget: controls in, core result out, figure drawn.

A widget is three layers (see CONTRIBUTING.md): a pure *core* function, a *renderer* that
draws the core's result on a matplotlib Figure, and this *wrapper*, which calls both
whenever a control changes and keeps the latest result in ``.state`` so tests can read it.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython import get_ipython
from IPython.display import display
from matplotlib.figure import Figure


def figure_png(fig: Figure) -> bytes:
    """A figure as PNG bytes (what the notebook, the widget and the site show)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return buf.getvalue()


def figure_and_axes(ax=None, figsize: tuple[float, float] = (6.4, 4.8)):
    """The renderers' common start: draw on ``ax`` when given (a panel of a stand-in), else on a new Figure."""
    if ax is None:
        fig = Figure(figsize=figsize)
        return fig, fig.add_subplot()
    return ax.figure, ax


def _register_figure_display() -> None:
    # The course draws on plain ``Figure`` objects, not pyplot, so nothing leaks between
    # cells; IPython only knows how to show pyplot figures, so teach it these too.
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


_register_figure_display()


class Explorer(widgets.VBox):
    """Controls above an output area; ``.state`` and ``.figure`` hold the latest update.

    Subclasses pass their controls, a ``compute(**values)`` core call and a
    ``render(state)`` renderer. Figures are plain ``Figure`` objects (not pyplot), so
    nothing leaks into other cells and updates stay fast.
    """

    def __init__(self, controls: dict[str, widgets.ValueWidget], compute: Callable[..., Any],
                 render: Callable[[Any], Figure], *, title: str = "") -> None:
        self.controls = controls
        self._compute = compute
        self._render = render
        self.output = widgets.Output()
        self.message = widgets.HTML()
        self.state: Any = None
        self.figure: Figure | None = None
        header = [widgets.HTML(f"<b>{title}</b>")] if title else []
        row = widgets.HBox(list(controls.values()), layout=widgets.Layout(flex_flow="row wrap"))
        super().__init__(header + [row, self.message, self.output])
        for control in controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    def values(self) -> dict[str, Any]:
        return {name: control.value for name, control in self.controls.items()}

    def _on_change(self, _change: dict) -> None:
        self.update()

    def update(self) -> None:
        """Recompute the core result and redraw; a core error is shown as a sentence."""
        self.state = self._compute(**self.values())
        self.figure = self._render(self.state)
        self.message.value = getattr(self.state, "message", "")
        self.output.clear_output(wait=True)
        with self.output:
            display(self.figure)
