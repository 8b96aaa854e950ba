"""The IPython shell a job's cells run in: no kernel, no history; its outputs become nbformat outputs, capped
while they stream."""

from __future__ import annotations

import io
import json
import sys

import matplotlib.figure
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from . import base  # noqa: F401  (the warm process first: torch's threads, the Agg backend, the preload)
from .policy import CELL_CAP, DISPLAY_CAP, STREAM_CAP, TRACEBACK_LINES


class _Collector:
    """The current cell's outputs, in nbformat v4 shape, with caps applied while streaming."""

    def __init__(self) -> None:
        self.outputs: list[dict] = []
        self.size = 0
        self.streamed = {"stdout": 0, "stderr": 0}

    def reset(self) -> None:
        self.__init__()

    def stream(self, name: str, text: str) -> None:
        used = self.streamed[name]
        if used >= STREAM_CAP:
            return
        if used + len(text) > STREAM_CAP:
            text = text[: STREAM_CAP - used] + "\n[output truncated]\n"
        self.streamed[name] = used + len(text)
        if self.outputs and self.outputs[-1].get("output_type") == "stream" and self.outputs[-1]["name"] == name:
            self.outputs[-1]["text"] += text
        else:
            self.outputs.append({"output_type": "stream", "name": name, "text": text})

    def display(self, kind: str, data: dict, metadata: dict | None, count: int | None = None) -> None:
        data = {str(k): v for k, v in (data or {}).items()}
        try:
            size = len(json.dumps(data, default=repr))
        except Exception:
            data, size = {"text/plain": "[output could not be serialised]"}, 40
        if size > DISPLAY_CAP or self.size + size > CELL_CAP:
            data, size = {"text/plain": "[display output too large, left out]"}, 40
        self.size += size
        out = {"output_type": kind, "data": data, "metadata": {}}
        if kind == "execute_result":
            out["execution_count"] = count
        self.outputs.append(out)

    def error(self, ename: str, evalue: str, traceback: list[str]) -> None:
        self.outputs.append({"output_type": "error", "ename": ename, "evalue": evalue[:STREAM_CAP],
                             "traceback": [t[:STREAM_CAP] for t in traceback[:TRACEBACK_LINES]]})


COLLECT = _Collector()


class _Sink(io.TextIOBase):
    """sys.stdout / sys.stderr: text goes to the cell's outputs, capped."""

    def __init__(self, name: str, fd: int) -> None:
        self.name_ = name
        self.fd = fd

    def write(self, s) -> int:
        COLLECT.stream(self.name_, str(s))
        return len(s)

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return False


class _Publisher(DisplayPublisher):
    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs) -> None:
        COLLECT.display("display_data", data, metadata)

    def clear_output(self, wait=False) -> None:
        COLLECT.outputs = [o for o in COLLECT.outputs if o["output_type"] == "error"]


class _Hook(DisplayHook):
    def start_displayhook(self) -> None:
        self._bundle = None

    def write_output_prompt(self) -> None:
        pass

    def write_format_data(self, format_dict, md_dict=None) -> None:
        self._bundle = (format_dict, md_dict)

    def finish_displayhook(self) -> None:
        if self._bundle is not None:
            COLLECT.display("execute_result", self._bundle[0], self._bundle[1], self.prompt_count)


class GradeShell(InteractiveShell):
    """An IPython shell whose outputs become notebook outputs; no kernel, no history."""

    displayhook_class = _Hook
    display_pub_class = _Publisher

    def _showtraceback(self, etype, evalue, stb) -> None:
        COLLECT.error(getattr(etype, "__name__", str(etype)), str(evalue), list(stb))

    def enable_gui(self, gui=None) -> None:  # no event loop here
        pass


def _one_module_walk(format_traceback):
    """`format_traceback` with inspect.getmodule remembered for the length of one call. IPython asks it for
    every frame of a traceback (to skip its own), and for a notebook cell's frame, which no module's file is,
    getmodule walks all of sys.modules (about 2,700 here) each time: 14 walks, some 30 ms, for a failed check.
    Within one call sys.modules stays as it is, so each answer is the one getmodule would give. A getmodule
    the notebook put there itself is left alone, and so is one already swapped by a call in progress."""
    import inspect

    real = inspect.getmodule
    code_type = type(_one_module_walk.__code__)

    def formatted(*args, **kwargs):
        if inspect.getmodule is not real:
            return format_traceback(*args, **kwargs)
        known: dict[str, object] = {}

        def getmodule(obj, _filename=None):
            code = getattr(obj, "f_code", None)
            if type(code) is not code_type or _filename is not None:
                return real(obj, _filename)
            if code.co_filename not in known:
                known[code.co_filename] = real(obj)
            return known[code.co_filename]

        inspect.getmodule = getmodule
        try:
            return format_traceback(*args, **kwargs)
        finally:
            inspect.getmodule = real

    return formatted


def _warm_tracebacks(shell: GradeShell) -> None:
    """Pay once, here, for what every learner's first traceback would: the formatter's imports, and a failed
    check's traceback through the course library's checks (their parsed source, stack_data's and executing's,
    stays in the warm process): about 30 ms of every failed check's cell."""
    try:
        raise ValueError("warm-up")
    except ValueError:
        shell.InteractiveTB.structured_traceback(*sys.exc_info())
    expect_true = getattr(sys.modules.get("torchcourse.grading"), "expect_true", None)
    if expect_true is None:
        return
    try:
        exec(compile("expect_true(False, 'warm-up')", "<ipython-input-0-warm-up>", "exec"),
             {"expect_true": expect_true})
    except Exception:
        shell.InteractiveTB.structured_traceback(*sys.exc_info())


def make_shell() -> GradeShell:
    cfg = Config()
    cfg.HistoryManager.enabled = False
    cfg.InteractiveShell.colors = "nocolor"
    cfg.InteractiveShell.xmode = "Context"
    shell = GradeShell.instance(config=cfg)
    shell.enable_matplotlib("inline")
    tb = shell.InteractiveTB
    tb.structured_traceback = _one_module_walk(tb.structured_traceback)
    # Warm-up: the first figure and the first traceback are slow; pay for them once, here.
    fig = matplotlib.figure.Figure()
    fig.add_subplot().plot([0, 1])
    fig.savefig(io.BytesIO(), format="png")
    _warm_tracebacks(shell)
    return shell
