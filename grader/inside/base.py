"""The warm process: torch imported once and set up for forking, the course library preloaded.

The only module of the worker with import-time side effects. Importing it sets torch's thread counts, wraps
`torch.manual_seed` as TorchDynamo would and imports the course library; every module that needs the warm
process imports it, and the rest of the worker (`channel`, `cleanup`, `confine`, `policy`) can be loaded on
its own, in a test's process, without torch.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys

os.environ.setdefault("MPLBACKEND", "Agg")
import torch  # noqa: E402

# Before any torch op: a forked child of a parent that used 2 threads can hang (measured).
torch.set_num_threads(1)
torch.set_num_interop_threads(1)
import matplotlib  # noqa: E402
import matplotlib.figure  # noqa: E402
import matplotlib.pyplot  # noqa: E402,F401
import matplotlib_inline.backend_inline  # noqa: E402,F401


def _wrap_manual_seed_as_dynamo_does() -> None:
    """Do to torch.manual_seed now what importing torch._dynamo does (torch/_dynamo/__init__.py: wrap it with
    torch._disable_dynamo, register the wrapper as aten::manual_seed; dynamo skips both when it finds them
    done). A job that imports dynamo (torch.func, torch.compile) then rebinds nothing the integrity snapshot
    holds, and the worker need not import dynamo itself (1.2 s and 70 MB) for a chapter that never uses it.
    The wrapper asks `__dynamo_disable` what to call; this one calls the function itself while dynamo is not
    loaded (nothing can be compiling then) and dynamo's own disable once it is, as dynamo's wrapper would."""
    raw = torch.random.manual_seed
    if torch.manual_seed is not raw:
        return  # dynamo is loaded already and wrapped it
    from torch.jit import _builtins

    def disable(*args, **kwargs):
        dynamo = sys.modules.get("torch._dynamo")
        if dynamo is None or not hasattr(dynamo, "disable"):
            return raw(*args, **kwargs)
        raw.__dynamo_disable = dynamo.disable(raw, True, wrapping=False)
        return raw.__dynamo_disable(*args, **kwargs)

    raw.__dynamo_disable = disable
    torch.manual_seed = torch._disable_dynamo(raw)
    _builtins._register_builtin(torch.manual_seed, "aten::manual_seed")


_wrap_manual_seed_as_dynamo_does()  # before the integrity snapshot, which holds the wrapper
# Imported here, before the library's preload, as they always were: the library finds them loaded.
import IPython.core.displayhook  # noqa: E402,F401
import IPython.core.displaypub  # noqa: E402,F401
import IPython.core.interactiveshell  # noqa: E402,F401
import numpy  # noqa: E402,F401
import numpy.testing  # noqa: E402,F401
import traitlets.config  # noqa: E402,F401

# The course library and its widgets, preloaded so every job starts warm. What fails to import here is
# not swallowed: it goes back on the ready line ("preload_errors") and autograde tells the instructor.
PRELOAD_ERRORS: dict[str, str] = {}


def _preload_failed(name: str, exc: BaseException | None) -> None:
    if name not in PRELOAD_ERRORS:
        PRELOAD_ERRORS[name] = f"{type(exc).__name__}: {exc}"[:500] if exc is not None else "import failed"


def _preload(name: str):
    try:
        return importlib.import_module(name)
    except (Exception, SystemExit) as exc:  # a module under construction must not stop grading
        _preload_failed(name, exc)
        return None


with contextlib.redirect_stdout(sys.stderr):  # stdout is the protocol: a module that prints must not break it
    _preload("ipywidgets")
    torchcourse = _preload("torchcourse")
    if torchcourse is not None and _preload("torchcourse.grading") is None:
        torchcourse = None  # no seed to set in a child; every hidden check fails, and the instructor is told why
    if torchcourse is not None:
        import pkgutil  # noqa: E402

        # The grader names the library modules the chapter's notebooks import (TORCHCOURSE_PRELOAD,
        # comma-separated): their packages (torchcourse.tensors, ...) are preloaded, other chapters' are not
        # (chapter 2's graph layout alone imports networkx, 0.3 s a worker); the modules at the top of the
        # library always are. A job may still import anything; it then pays for the import. Unset: everything.
        _wanted = {".".join(n.split(".")[:2]) for n in os.environ.get("TORCHCOURSE_PRELOAD", "").split(",") if n}

        def _preload_tree(path, prefix: str) -> None:
            """Every wanted module under `path` (pkgutil.walk_packages would import every package first)."""
            for info in pkgutil.iter_modules(path, prefix):
                top_module = info.name.count(".") == 1 and not info.ispkg
                if _wanted and not top_module and ".".join(info.name.split(".")[:2]) not in _wanted:
                    continue
                if info.name in PRELOAD_ERRORS:
                    continue
                mod = sys.modules.get(info.name) or _preload(info.name)
                if info.ispkg and mod is not None:
                    _preload_tree(getattr(mod, "__path__", []), info.name + ".")

        _preload_tree(torchcourse.__path__, "torchcourse.")
        # A package of the library may name what its chapter's jobs would otherwise import once each (WARM:
        # torch.func's transforms and torch.optim's optimizers import torch._dynamo on first use, 1.2 s a job).
        for _name, _mod in list(sys.modules.items()):
            if _name.startswith("torchcourse.") and _name.count(".") == 1 and _mod is not None:
                for _warm in getattr(_mod, "WARM", ()):
                    _preload(_warm)

try:
    from torchcourse.contract import EMIT_MIME
except ImportError:  # reported by the parent as a missing course library
    EMIT_MIME = "application/vnd.torchcourse.emit+json"
