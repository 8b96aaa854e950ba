"""The warm sandbox worker: import torch once, then fork one child per submission.

This file runs *inside* the sandbox (bubblewrap when available) as
``python -I warm_worker.py``; it imports nothing from the grader package and holds no
answers, tests or grades, because every child it forks sees its memory.

Protocol (one JSON object per line): the grader writes ``{"id", "dir", "results", "uid", "gid",
"cell_timeout", "budget", "mem_mb", "nproc", "fsize_mb", "tmp_mb", "netns", "isolate"}`` on stdin;
the worker answers ``{"id", "status", "code", "signal", "seconds"}`` (and ``"notes"``, what it saw
of the job from outside) on stdout; ``grader/wire.py`` gives these their types. The job
directory holds ``job.json`` (cells and seed, readable by root only). The worker forks
the child first and only then reads and deletes ``job.json``: the child gets the seed and
each cell over a pipe, one cell at a time, after the previous one has reported. The child
reports on a second pipe (an inherited descriptor, not a path it could replace): every line
carries the nonce the worker chose for that cell. Emitted values and tampering records are
written on it by an audit hook the moment they happen (see "integrity" below). The worker
writes what it accepted, one line per cell, to ``results`` (a file outside the job's folder).
Those lines are still *claims* of code that ran beside learner code: the judge treats them
as data, never as verdicts.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import io
import json
import math
import os
import resource
import secrets
import select
import signal
import sys
import time
from _thread import get_ident as _thread_ident

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
import numpy  # noqa: E402,F401
import numpy.testing  # noqa: E402,F401
from IPython.core.displayhook import DisplayHook  # noqa: E402
from IPython.core.displaypub import DisplayPublisher  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from traitlets.config import Config  # noqa: E402

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
STREAM_CAP = 100_000          # characters kept per stream per cell
DISPLAY_CAP = 4_000_000       # bytes of one display bundle, serialised
CELL_CAP = 16_000_000         # bytes of one cell's outputs, serialised
SETUP_TIMEOUT = 60.0          # seconds a child may take to set itself up before its first cell
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
MS_NOSUID, MS_NODEV, MS_BIND, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x1000, 0x4000, 0x40000
# A job's own namespaces (`_fresh_job_space`): the network one too, since the worker's outlived each job's
# sockets (a loopback port one job left in TIME_WAIT was still taken in the next).
JOB_NAMESPACES = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_PDEATHSIG = 1
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2
_libc = ctypes.CDLL(None, use_errno=True)


# --------------------------------------------------------------------------- the shell

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
                             "traceback": [t[:STREAM_CAP] for t in traceback[:200]]})


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


# --------------------------------------------------------------------------- integrity
# Learner code shares this process. What decides a score must not be forgeable from it, so:
# * values a hidden check emits reach the parent through an audit hook (PEP 578: it cannot be removed
#   once added), written at once on an inherited pipe with a per-cell nonce the parent chose;
# * the same hook records tampering the moment it happens (frame and traceback introspection, trace and
#   profile functions, gc walks, ctypes, reading process memory, writes to library classes), before the
#   learner's code can use what it would get;
# * at every boundary of a checks cell and at every emitted value, identities of the library functions
#   the checks use, the notebook's names for them, torch's mode stacks and trace functions are compared
#   with a snapshot taken before any learner code ran.
# The hook and the checks are closures: nothing a learner can reach by name holds them.

WATCHED = ["builtins", "math", "operator", "sys", "re", "random", "json", "hashlib", "numpy", "numpy.testing",
           "numpy.linalg", "numpy.random", "torch", "torch.testing", "torch.nn", "torch.nn.functional",
           "torch.overrides", "torch.autograd", "IPython.display", "IPython.core.display_functions"]
# Names a notebook binds to libraries; a hidden block sees the library itself whatever the notebook rebound.
CANONICAL = {"torch": "torch", "np": "numpy", "numpy": "numpy", "math": "math", "re": "re", "random": "random",
             "F": "torch.nn.functional", "nn": "torch.nn"}
LIBRARY_NAMES = frozenset({"torch", "np", "numpy", "F", "nn"})
# What IPython itself swaps while a cell runs (its builtin and display traps): not tampering.
TRAPPED = frozenset({"builtins.exit", "builtins.quit", "builtins.get_ipython", "builtins.display",
                     "sys.displayhook", "sys.excepthook", "sys.breakpointhook"})
# Introspection helpers a learner may call instead of sys._getframe: the event is theirs, not the helper's.
# (traceback.py reads tb_frame to print an exception the learner caught: honest, so not counted there.)
HELPER_FILES = ("/inspect.py", "/traceback.py", "/ctypes/__init__.py")
TB_HELPER_FILES = ("/inspect.py",)
CODE_ATTRS = frozenset({"__code__", "__defaults__", "__kwdefaults__"})
FRAME_ATTRS = frozenset({"tb_frame", "gi_frame", "cr_frame", "ag_frame"})
ALWAYS = frozenset({"sys.settrace", "sys.setprofile", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
                    "sys._current_frames"})
LEARNER = frozenset({"sys._getframe", "compile", "code.__new__", "function.__new__"})
# Every event the guard looks at (and "ctypes.*"); anything else returns at once. Rendering one figure raises
# thousands of "builtins.id" events, each a call of the hook.
GUARDED = ALWAYS | LEARNER | {"torchcourse.emit", "torchcourse.called", "object.__getattr__", "object.__setattr__",
                              "object.__delattr__", "open"}


def _watched_value(v) -> bool:
    # Functions, classes and modules: what a check calls. Plain data (a seed, a constant) may change.
    return callable(v) or type(v).__name__ == "module" or isinstance(v, (property, staticmethod, classmethod))


def _modules() -> list[str]:
    names = list(WATCHED)
    names += sorted(n for n in sys.modules if n == "torchcourse" or n.startswith("torchcourse."))
    return names


def _dict_version(d: dict):
    """A live view of `d`'s version tag (PEP 509: CPython 3.11 gives every dict change a new one), or None
    where this interpreter's layout is not the one checked here. A namespace whose tag has not moved since the
    snapshot has not changed, so the guard skips it: a scan reads every value, and in a forked child every
    read writes a reference count, copying thousands of pages per job (about 20 ms)."""
    if sys.implementation.name != "cpython" or sys.version_info[:2] != (3, 11):
        return None
    word = ctypes.sizeof(ctypes.c_ssize_t)  # ob_refcnt, ob_type, ma_used, then ma_version_tag
    probe: dict = {}
    tag = ctypes.c_uint64.from_address(id(probe) + 3 * word)
    before = tag.value
    probe["x"] = object()
    after = tag.value
    probe["x"] = object()
    if ctypes.c_ssize_t.from_address(id(probe) + 2 * word).value != 1 or len({before, after, tag.value}) != 3:
        return None
    return ctypes.c_uint64.from_address(id(d) + 3 * word)


# name -> (live version tag of the namespace's dict, its value at the snapshot); filled by _snapshot().
SNAP_VERSIONS: dict = {}


def _snapshot() -> dict:
    """Identity of every attribute of the libraries hidden checks rely on, and of torch.Tensor's methods."""
    import gc

    snap = {}
    for name in _modules():
        mod = sys.modules.get(name)
        if mod is None:
            continue
        snap[name] = (id(mod), {k: id(v) for k, v in vars(mod).items() if _watched_value(v)})
        tag = _dict_version(vars(mod))
        if tag is not None:
            SNAP_VERSIONS[name] = (tag, tag.value)
    for name, cls in (("torch.Tensor", torch.Tensor), ("torch._C.TensorBase", torch._C.TensorBase),
                      ("torch.nn.Module", torch.nn.Module), ("torch.Generator", torch.Generator)):
        snap[name] = (id(cls), {k: id(v) for k, v in vars(cls).items()})
        inner = gc.get_referents(vars(cls))  # the class's own dict, behind its read-only proxy
        tag = _dict_version(inner[0]) if len(inner) == 1 and type(inner[0]) is dict else None
        if tag is not None:
            SNAP_VERSIONS[name] = (tag, tag.value)
    return snap


def make_guard(shell: GradeShell, snap: dict, fd: int, grading, canonical: dict):
    """(audit hook, check, state): the hook records events and emitted values on `fd`; `check(where)`
    compares the process with `snap`; `state` holds the current nonce and the hidden checks' file names."""
    state = {"nonce": "", "hidden": set(), "busy": set()}
    dumps, write, fstat, getident, kill, getpid = json.dumps, os.write, os.fstat, _thread_ident, os.kill, os.getpid
    getframe, modules, gettrace, getprofile = sys._getframe, sys.modules, sys.gettrace, sys.getprofile
    ino = (fstat(fd).st_dev, fstat(fd).st_ino)
    classes = {"torch.Tensor": torch.Tensor, "torch._C.TensorBase": torch._C.TensorBase,
               "torch.nn.Module": torch.nn.Module, "torch.Generator": torch.Generator}
    watched_types = frozenset(id(c) for c in classes.values()) | {id(GradeShell), id(_Publisher), id(_Hook),
                                                                  id(_Sink), id(_Collector), id(InteractiveShell),
                                                                  id(DisplayPublisher), id(DisplayHook)}
    emit_code = grading.emit.__code__ if grading is not None else None
    fn_len, dispatch_len = torch._C._len_torch_function_stack, torch._C._len_torch_dispatch_stack
    events = shell.events.callbacks
    callbacks = {k: list(v) for k, v in events.items()}
    transformers = (list(shell.input_transformers_cleanup), list(shell.input_transformers_post),
                    list(shell.ast_transformers))
    user_ns = shell.user_ns
    Module = type(sys)
    # The library names hidden blocks use: rebinding one is tampering (the hidden block gets the library anyway).
    libraries = {name: modules[mod] for name, mod in CANONICAL.items() if mod in modules and name in LIBRARY_NAMES}

    def send(obj) -> None:
        st = fstat(fd)
        if (st.st_dev, st.st_ino) != ino:  # the channel was replaced: nothing this process says can be trusted
            kill(getpid(), 9)
        write(fd, (dumps({"n": state["nonce"], **obj}, default=repr) + "\n").encode())

    def learner_caused(frame, helpers=HELPER_FILES) -> bool:
        """Is the innermost frame that is not an introspection helper a notebook cell's?"""
        while frame is not None and frame.f_code.co_filename.endswith(helpers):
            frame = frame.f_back
        return frame is not None and frame.f_code.co_filename.startswith("<ipython-input-")

    # Checked at every emitted value and every return from learner code, so it must be cheap: a namespace
    # whose dict version has not moved since the snapshot is skipped; the others are compared key by key
    # (builtins and sys move at every cell: IPython swaps its traps there).
    views = {name: vars(classes[name]) if name in classes else vars(modules[name])
             for name in snap if name in classes or name in modules}
    skipped = frozenset({"__builtins__", "__loader__", "__spec__", "__cached__"})
    scans = [(name, views[name], attrs, SNAP_VERSIONS.get(name, (None, None)))
             for name, (_, attrs) in snap.items() if name in views]
    module_ids = [(name, mod_id) for name, (mod_id, _) in snap.items() if name not in classes]
    class_sizes = [(name, views[name], len(snap[name][1])) for name in classes if name in views]

    # A namespace found as in the snapshot is not scanned again until its version moves on from the one read
    # just before that scan (builtins and sys move once a cell, not once an emitted value); the same for the
    # notebook's names, with sys.modules beside them.
    clean: dict[str, int] = {}
    ns_tags = (_dict_version(user_ns), _dict_version(modules))
    notebook_clean = [None]  # (user_ns, sys.modules) versions at the last check that found the names right

    def changed() -> list[str]:
        found = []
        for name, view, attrs, (tag, then) in scans:
            if tag is not None:
                now = tag.value
                if now == then or clean.get(name) == now:
                    continue
            diff = [label for key, ident in attrs.items() if id(view.get(key, changed)) != ident
                    and key not in skipped and (label := f"{name}.{key}") not in TRAPPED]
            if diff:
                found += diff
            elif tag is not None:
                clean[name] = now
        found += [f"sys.modules[{name!r}] replaced" for name, mod_id in module_ids if id(modules.get(name)) != mod_id]
        for name, view, size in class_sizes:  # an attribute added to a class (shadowing TensorBase's, say)
            if len(view) != size:
                found += [f"{name}.{k} added" for k in view if k not in snap[name][1]]
        now_ns = tuple(t.value for t in ns_tags) if None not in ns_tags else None
        if now_ns is None or notebook_clean[0] != now_ns:
            wrong = [f"the notebook's name {name!r} is not the {lib.__name__} module"
                     for name, lib in libraries.items() if name in user_ns and user_ns[name] is not lib]
            wrong += [f"the notebook's name {name!r} is not the module it claims"
                      for name, value in list(user_ns.items()) if type(value) is Module
                      and getattr(value, "__name__", None) in modules and modules[value.__name__] is not value]
            if wrong:
                found += wrong
            elif now_ns is not None:
                notebook_clean[0] = now_ns
        ns = state.get("ns")  # a running hidden block's namespace: reachable through a function it passed on
        if ns is not None:
            found += [f"the hidden block's name {k!r} rebound" for k, v in canonical.items()
                      if k in ns and ns[k] is not v]
        if fn_len() or dispatch_len():
            found.append("a torch function or dispatch mode is active")
        if gettrace() is not None or getprofile() is not None:
            found.append("a trace or profile function is set")
        if {k: list(v) for k, v in events.items()} != callbacks:
            found.append("IPython event callbacks registered")
        if (list(shell.input_transformers_cleanup), list(shell.input_transformers_post),
                list(shell.ast_transformers)) != transformers:
            found.append("IPython input or AST transformers registered")
        return found[:20]

    def check(where: str) -> list[str]:
        found = changed()
        if found:
            send({"tampered": [f"{where}: {x}" for x in found]})
        return found

    guarded = GUARDED

    def hook(event: str, args: tuple) -> None:
        if event not in guarded and not event.startswith("ctypes."):
            return
        if event == "torchcourse.emit":
            who = getident()
            if who in state["busy"]:
                return
            state["busy"].add(who)
            try:
                frame = getframe(1)
                caller = frame.f_back if frame is not None else None
                if emit_code is None or frame.f_code is not emit_code or caller is None \
                        or caller.f_code.co_filename not in state["hidden"]:
                    send({"tampered": ["a value was emitted from outside the hidden checks"]})
                    return
                found = changed()
                if found:
                    send({"tampered": [f"at an emitted value: {x}" for x in found]})
                send({"emit": args[0] if args else None})
            finally:
                state["busy"].discard(who)
            return
        if event == "torchcourse.called":
            who = getident()
            if who not in state["busy"]:
                state["busy"].add(who)
                try:
                    found = changed()
                    if found:
                        send({"tampered": [f"as learner code returned: {x}" for x in found]})
                finally:
                    state["busy"].discard(who)
            return
        if event == "object.__getattr__":
            if args[1] not in FRAME_ATTRS:
                return
        elif event in ("object.__setattr__", "object.__delattr__"):
            # a library class changed, or any function's code swapped in place (its identity stays)
            if id(args[0]) not in watched_types and args[1] not in CODE_ATTRS:
                return
        elif event == "open":
            path = str(args[0])
            if not (path.startswith("/proc/") and path.endswith(("/mem", "/pagemap"))):
                return
        elif event not in ALWAYS and event not in LEARNER and not event.startswith("ctypes."):
            return
        who = getident()
        if who in state["busy"]:
            return
        state["busy"].add(who)
        try:
            if event in ALWAYS or event == "open" or event.startswith("object.__setattr__") \
                    or event == "object.__delattr__":
                if event == "sys._current_frames" and not learner_caused(getframe(1)):
                    return
                if event.startswith("object.__") and not learner_caused(getframe(1)):
                    return
            elif event == "object.__getattr__":
                if not learner_caused(getframe(1), TB_HELPER_FILES):
                    return
            elif event in ("compile", "code.__new__", "function.__new__"):
                name = str(args[1]) if event == "compile" and len(args) > 1 else ""
                if event == "code.__new__" and len(args) > 1:
                    name = str(args[1])
                if not name.startswith(("<ipython-input-", "<hidden-checks-")) or not learner_caused(getframe(1)):
                    return
            elif not learner_caused(getframe(1)):
                return
            detail = args[1] if event.startswith("object.") else ""
            send({"tampered": [f"{event} {detail}".strip() + " called from notebook code"]})
        finally:
            state["busy"].discard(who)

    return hook, check, state


# --------------------------------------------------------------------------- the child

def _drop(spec: dict) -> None:
    uid, gid = spec.get("uid"), spec.get("gid")
    if uid is None:
        return
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(NO_NEW_PRIVS) failed")
    _seccomp()


# What learner code may not do, refused by a seccomp filter (as Docker's default profile refuses it):
# * make a user namespace: in one of its own a job was root, and mounted a tmpfs of any size beside the temp
#   space `_fresh_job_space` bounds. unshare and clone with CLONE_NEWUSER get EPERM; clone3, whose flags a
#   filter cannot read, ENOSYS (glibc then uses clone).
# * use the kernel keyrings (add_key, request_key, keyctl: EPERM). They are kept per uid, not per process or
#   namespace: a key a job left in its user keyring was read by the next job, run as the same uid, and a job
#   can set the keyring's permissions so that nothing without CAP_SYS_ADMIN could empty it after the job.
# A system call of another ABI (i386, x32) is refused too, so none goes around the filter.
_SECCOMP = {"x86_64": (0xC000003E, 272, 56, 435, (248, 249, 250)),
            "aarch64": (0xC00000B7, 97, 220, 435, (217, 218, 219))}.get(os.uname().machine)
CLONE_NEWUSER = 0x10000000


def _seccomp() -> None:
    if _SECCOMP is None:
        return  # an architecture whose numbers are not known here: the job may do both
    import struct

    arch, unshare, clone, clone3, keyrings = _SECCOMP
    allow, eperm, enosys = 0x7FFF0000, 0x00050000 | 1, 0x00050000 | 38
    ld, jeq, jge, jset, ret = 0x20, 0x15, 0x35, 0x45, 0x06
    prog = [
        (ld, 0, 0, 4), (jeq, 1, 0, arch), (ret, 0, 0, eperm),   # [4]: the ABI; another one is refused
        (ld, 0, 0, 0), (jge, 0, 1, 0x40000000), (ret, 0, 0, eperm),  # [0]: the number; x32's are refused
        (jeq, 0, 1, clone3), (ret, 0, 0, enosys),
        *[ins for nr in keyrings for ins in ((jeq, 0, 1, nr), (ret, 0, 0, eperm))],
        (jeq, 1, 0, unshare), (jeq, 0, 3, clone),
        (ld, 0, 0, 16), (jset, 0, 1, CLONE_NEWUSER), (ret, 0, 0, eperm),  # [16]: the flags (low 32 bits)
        (ret, 0, 0, allow),
    ]
    code = b"".join(struct.pack("HBBI", *ins) for ins in prog)
    filt = ctypes.create_string_buffer(code, len(code))

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    fprog = Prog(len(prog), ctypes.addressof(filt))
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_SECCOMP) failed")


def _limits(spec: dict) -> None:
    with open("/proc/self/statm") as f:
        vsz = int(f.read().split()[0]) * resource.getpagesize()
    mem = vsz + int(spec["mem_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    cpu = int(spec["budget"]) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 2))
    size = int(spec["fsize_mb"]) * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if spec.get("uid") is not None:  # NPROC counts per uid: only meaningful for a uid of our own
        resource.setrlimit(resource.RLIMIT_NPROC, (int(spec["nproc"]), int(spec["nproc"])))


def _mount(source: str, target: str, fstype: str | None, flags: int, options: str | None = None) -> None:
    if _libc.mount(source.encode(), target.encode(), fstype.encode() if fstype else None, flags,
                   options.encode() if options else None) != 0:
        raise OSError(ctypes.get_errno(), f"mount {source} on {target} failed")


def _fresh_job_space(jobdir: str, tmp_mb: int, uid: int | None, gid: int | None) -> None:
    """Give this job IPC and network namespaces and a temp space of its own, all torn down with the job.

    A new IPC namespace holds the job's SysV shared memory, message queues and semaphores and its POSIX
    message queues; a new network namespace its sockets (with a loopback of its own); a new mount namespace
    holds one tmpfs of `tmp_mb` MB that backs the job's folder and /dev/shm together, so their total is
    bounded. When the job's last process exits, the namespaces go and everything in them is freed: nothing
    is left for the next job to read, and no memory stays charged to the warm worker.
    Runs as root, before the uid is dropped."""
    _job_namespaces()
    _mount("none", "/", None, MS_REC | MS_PRIVATE)  # nothing mounted here reaches the worker
    # The chapter's data files the grader put beside the cells (job.json is the worker's, raw.out the output's).
    data = {}
    for entry in os.scandir(jobdir):
        if entry.name not in ("job.json", "raw.out") and entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as f:
                data[entry.name] = f.read()
    _mount("tmpfs", jobdir, "tmpfs", MS_NOSUID | MS_NODEV, f"size={tmp_mb}m,nr_inodes=65536,mode=0755")
    parts = {}
    for name, mode in (("work", 0o700), ("shm", 0o1777)):
        path = os.path.join(jobdir, name)
        os.mkdir(path)
        os.chmod(path, mode)
        parts[name] = os.open(path, os.O_PATH | os.O_DIRECTORY)
    if uid is not None:
        os.chown(os.path.join(jobdir, "work"), uid, gid)
    for name, content in data.items():
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=parts["work"])
        try:
            os.write(fd, content)
        finally:
            os.close(fd)
    # The job's folder becomes the tmpfs's work/, /dev/shm its shm/ (binds go through /proc/self/fd, which
    # still reaches a path once it is covered). /tmp is left alone: the environment and the course library
    # may live under it (a CI clone in mktemp -d), and inside bubblewrap the job cannot write there anyway.
    _mount(f"/proc/self/fd/{parts['work']}", jobdir, None, MS_BIND)
    if os.path.isdir("/dev/shm"):
        _mount(f"/proc/self/fd/{parts['shm']}", "/dev/shm", None, MS_BIND)
    for fd in parts.values():
        os.close(fd)


def _job_namespaces() -> None:
    """Enter a job's own mount, IPC and network namespaces, its loopback up (`_fresh_job_space`, and its probe)."""
    if _libc.unshare(JOB_NAMESPACES) != 0:
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET) failed")
    _loopback_up()


def _loopback_up() -> None:
    """Bring up the loopback interface of a new network namespace (it starts down): lessons talk to
    127.0.0.1 (chapter 3's gloo), as they did in the worker's namespace."""
    import fcntl
    import socket
    import struct

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        flags = struct.unpack_from("16sH", fcntl.ioctl(s, SIOCGIFFLAGS, struct.pack("16sH14x", b"lo", 0)))[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _job_namespaces_here() -> str:
    """"" when a job child here can make what `_fresh_job_space` makes (IPC, mount, network namespaces, a tmpfs),
    else why not. Probed once, at start, in a throw-away child: the grader's own probe ran outside the
    sandbox, and inside it a capability may be missing."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            _job_namespaces()
            _mount("none", "/", None, MS_REC | MS_PRIVATE)
            _mount("tmpfs", os.getcwd(), "tmpfs", MS_NOSUID | MS_NODEV, "size=1m")
        except BaseException as exc:
            os.write(w, f"{type(exc).__name__}: {exc}".encode()[:300])
            code = 1
        os._exit(code)
    os.close(w)
    why = os.read(r, 400).decode("utf-8", "replace")
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return "" if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 else (why or "the probe did not finish")


def _read_message(fd: int, buf: bytearray) -> dict | None:
    """One JSON line from the parent (None at end of file)."""
    while b"\n" not in buf:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return None
        buf += chunk
    line, _, rest = bytes(buf).partition(b"\n")
    buf[:] = rest
    return json.loads(line)


def _seed_everything(seed: int) -> None:
    """Every job starts from the same random state, derived from the grader's seed (never the seed itself,
    so torch.initial_seed() and friends do not reveal it)."""
    import hashlib
    import random

    def derived(what: str, bits: int) -> int:
        return int.from_bytes(hashlib.sha256(f"{seed}:{what}".encode()).digest()[:8], "little") % 2**bits

    random.seed(derived("random", 63))
    numpy.random.seed(derived("numpy", 32))
    # The sandbox shows no accelerator, so the CPU generator is all torch.manual_seed would seed; seeding it
    # directly skips manual_seed's per-device imports and checks (2-4 ms in a freshly forked child).
    torch.default_generator.manual_seed(derived("torch", 63))
    if torchcourse is not None:
        torchcourse.grading.set_seed(seed, secret=True)


def _new_session(spec: dict) -> None:
    """A session of its own (the parent kills its group), signals as a cell expects, and outside
    bubblewrap a network namespace of its own when the OS allows."""
    os.setsid()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # an interrupt is for a cell, never for this set-up
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if spec.get("netns"):
        if _libc.unshare(CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) failed")


def _capture_output(spec: dict, keep: set[int]) -> int:
    """Send fds 1 and 2 (C and subprocess output) to raw.out, give the job its own IPC and temp space, close
    every inherited descriptor but `keep`; the descriptor the child reads raw.out back with."""
    jobdir = spec["dir"]
    raw_path = os.path.join(jobdir, "raw.out")
    raw = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    raw_reader = os.open(raw_path, os.O_RDONLY)
    if spec.get("isolate"):  # opened above, raw.out stays outside the job's own temp space
        _fresh_job_space(jobdir, int(spec["tmp_mb"]), spec.get("uid"), spec.get("gid"))
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(raw, 1)
    os.dup2(raw, 2)
    # Every inherited descriptor but these, a range at a time (close_range(2), not a close per number).
    low = 3
    for fd in sorted(k for k in keep | {raw_reader} if k >= 3):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, max(resource.getrlimit(resource.RLIMIT_NOFILE)[0], low))
    if spec.get("uid") is not None:
        os.fchown(raw_reader, spec["uid"], spec["gid"])
    return raw_reader


def _confine(spec: dict) -> None:
    """The limits, then the uid of the job: from here on the process can do only what the learner may."""
    _oom_score("0")
    if JOB_CPUS:
        os.sched_setaffinity(0, JOB_CPUS)  # every CPU the worker had: a lesson's processes run as in Jupyter
    _limits(spec)
    _drop(spec)


def _enter_job_folder(jobdir: str) -> None:
    """The learner's view: the job's folder as working directory and home, a plain environment, and
    stdout/stderr that become the cell's outputs."""
    os.chdir(jobdir)
    os.environ.clear()
    os.environ.update({"HOME": jobdir, "PATH": "/usr/bin:/bin", "TMPDIR": jobdir, "USER": "learner",
                       "MPLBACKEND": "module://matplotlib_inline.backend_inline", "PYTHONDONTWRITEBYTECODE": "1"})
    sys.stdout, sys.stderr = _Sink("stdout", 1), _Sink("stderr", 2)
    sys.stdin = open(os.devnull)


def _canonical_names(grading) -> dict:
    """The names a hidden block gets from the libraries, whatever the notebook bound to them."""
    canonical = {name: sys.modules[mod] for name, mod in CANONICAL.items() if mod in sys.modules}
    if grading is not None:
        canonical.update({name: getattr(grading, name) for name in grading.__all__ if hasattr(grading, name)})
    return canonical


def run_child(shell: GradeShell, spec: dict, cmd: int, res: int, snap: dict) -> None:
    """Set up the sandboxed process, then run the cells the parent sends; never returns.

    The parent sends ``{"seed", "nonce"}``, then ``{"cells": [{"i", "nonce", "source", "hidden"}, ...]}``:
    a run of plain cells, or one checks cell alone (``hidden`` true: once its visible part has run, the child
    asks for the hidden block and gets ``{"hidden": source}``), and at the end ``{"end": true}``. Every line
    back carries the nonce of the cell it belongs to; ``shown`` in a cell's result counts the outputs made
    before any hidden code arrived."""
    _new_session(spec)
    raw_reader = _capture_output(spec, keep={cmd, res})
    buf = bytearray()
    setup = _read_message(cmd, buf)  # the seed comes down the pipe: no file the job could read or replace
    _confine(spec)
    _enter_job_folder(spec["dir"])
    _seed_everything(int(setup["seed"]))
    shell.user_ns["__name__"] = "__main__"
    grading = sys.modules.get("torchcourse.grading")
    canonical = _canonical_names(grading)
    hook, check, state = make_guard(shell, snap, res, grading, canonical)
    state["nonce"] = setup["nonce"]
    sys.addaudithook(hook)  # from here on, every audited event passes the guard; it cannot be removed
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.write(res, (json.dumps({"n": setup["nonce"], "ready": True}) + "\n").encode())
    _serve_cells(shell, cmd, res, buf, raw_reader, state, check, canonical)


def _serve_cells(shell: GradeShell, cmd: int, res: int, buf: bytearray, raw_reader: int, state: dict, check,
                 canonical: dict) -> None:
    """Run each cell the parent sends and report it; exits the process at the end. Called before any
    learner code runs: everything the loop uses is bound to a local here, because learner code can rebind
    this module's globals."""
    read_message, dumps, write, monotonic, fflush, read, exit_ = _read_message, json.dumps, os.write, \
        time.monotonic, _libc.fflush, os.read, os._exit
    collect, run_cell, user_ns, hidden_defs, run_hidden = COLLECT, shell.run_cell, shell.user_ns, {}, _run_hidden

    def serve_cell(msg: dict) -> bool:
        """Run one cell and report it; False when the parent has gone."""
        state["nonce"] = msg["nonce"]
        hidden = msg.get("hidden")
        collect.reset()
        started = monotonic()
        if hidden:
            check("before the checks cell")
        try:
            ok = bool(run_cell(msg["source"], store_history=True).success)
        except BaseException as exc:  # run_cell catches nearly everything; record what slips through
            collect.error(type(exc).__name__, str(exc), [])
            ok = False
        shown = len(collect.outputs)  # what the cell showed before any hidden code was in this process
        if hidden and ok:
            write(res, (dumps({"n": msg["nonce"], "visible_done": True}) + "\n").encode())
            part = read_message(cmd, buf)  # the hidden block is sent only now
            if part is None:
                return False
            ok = run_hidden(part["hidden"], msg["nonce"], state, check, collect, user_ns, hidden_defs, canonical)
        if hidden:
            check("after the checks cell")
        fflush(None)
        chunk = read(raw_reader, STREAM_CAP + 1)
        while read(raw_reader, 1 << 20):  # skip, but keep the offset moving
            pass
        if chunk:
            text = chunk[:STREAM_CAP].decode("utf-8", "replace")
            if len(chunk) > STREAM_CAP:
                text += "\n[output truncated]\n"
            collect.stream("stdout", text)
        # "i" first: the parent finds a result by how it opens (_Channel._line)
        line = {"i": msg["i"], "status": "ok" if ok else "error", "execution_count": shell.execution_count - 1,
                "seconds": round(monotonic() - started, 4), "outputs": collect.outputs, "shown": shown}
        data = (dumps({"n": msg["nonce"], "result": line}, default=repr) + "\n").encode()
        if len(data) > CELL_CAP + STREAM_CAP * 4:
            data = (dumps({"n": msg["nonce"], "result": {"i": msg["i"], "status": "output_limit", "outputs": []}})
                    + "\n").encode()
        write(res, data)
        return True

    while (batch := read_message(cmd, buf)) is not None and not batch.get("end"):
        if not all(serve_cell(msg) for msg in batch["cells"]):
            break
    exit_(0)


def _run_hidden(source: str, nonce: str, state: dict, check, collect, user_ns: dict, hidden_defs: dict,
                canonical: dict) -> bool:
    """Run a checks cell's hidden block in a namespace of its own: the notebook's names (with the libraries
    restored where the notebook rebound them) plus what earlier hidden blocks defined. Learner functions
    see their own globals, not the hidden block's variables; no IPython hook or transformer applies."""
    name = f"<hidden-checks-{nonce}>"
    state["hidden"].add(name)
    check("before the hidden checks")
    ns = dict(user_ns)
    ns.update({k: v for k, v in hidden_defs.items() if k not in user_ns})
    ns.update({k: v for k, v in canonical.items() if k in ns})
    state["ns"] = ns
    try:
        exec(compile(source, name, "exec"), ns)
        ok = True
    except BaseException as exc:  # a failing check is data; so is an interrupt
        collect.error(type(exc).__name__, str(exc)[:STREAM_CAP], [])
        ok = False
    finally:
        state["ns"] = None
    for key, value in ns.items():
        if key not in user_ns or user_ns[key] is not value:
            hidden_defs[key] = value
    return ok


# --------------------------------------------------------------------------- the parent

# setresuid(2) as a raw system call changes only the calling thread's ids (glibc's wrapper changes every
# thread's); its number where this is known, else the fork below is used.
SYS_SETRESUID = {"x86_64": 117, "aarch64": 147}.get(os.uname().machine)


def _kill_uid(uid: int | None, pid: int) -> None:
    """Kill every process of the job: all of its uid when it has one, else its process group."""
    if uid is None:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        return
    if SYS_SETRESUID is not None:
        import threading

        done: list[bool] = []
        helper = threading.Thread(target=_kill_as, args=(uid, done))
        helper.start()
        helper.join()
        if done:
            if done[0]:
                _wait_dead(uid, pid)
            return
    helper = os.fork()  # a whole copy of this process: about 10 ms more than the thread above
    if helper == 0:
        try:
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)  # every process this uid may signal, except this one
        finally:
            os._exit(0)
    os.waitpid(helper, 0)
    _wait_dead(uid, pid)


KILL_WAIT = 2.0  # seconds the worker waits for a job's killed processes to finish dying


def _wait_dead(uid: int, pid: int) -> None:
    """Wait until no process of `uid` but the job's child (our own to reap) is still running: a killed
    process takes a moment to die (freeing its memory), and the next job, which runs as the same uid, must
    not find it. Bounded: a process stuck in the kernel does not stop the worker."""
    deadline = time.monotonic() + KILL_WAIT
    while time.monotonic() < deadline:
        running = False
        for p in os.listdir("/proc"):
            if not p.isdigit() or int(p) == pid:
                continue
            try:
                if os.stat(f"/proc/{p}").st_uid != uid:
                    continue
                with open(f"/proc/{p}/stat", "rb") as f:
                    state = f.read().rsplit(b")", 1)[1].split()[0]
            except (OSError, IndexError):
                continue  # gone while we looked
            if state not in (b"Z", b"X"):
                running = True
                break
        if not running:
            return
        time.sleep(0.002)


def _kill_as(uid: int, done: list[bool]) -> None:
    """In a thread of its own: take the job's uid as real and effective id (this thread only; the process's
    main thread, which signals to the worker are checked against, stays root), kill every process that uid
    may signal but this one, and end; the thread's ids go with it. The saved id stays 0, so that the ids
    could be restored; the effective capabilities are gone while the uid is the job's, so the kill reaches
    the job's processes and no others."""
    if _libc.syscall(SYS_SETRESUID, uid, uid, 0) != 0:
        return
    try:
        os.kill(-1, signal.SIGKILL)
        done.append(True)  # something was killed: `_wait_dead` waits for it to be gone
    except OSError:
        done.append(False)  # ESRCH: nothing of the job was left


def _sweep(uid: int | None) -> None:
    """Remove what a job left in shared scratch folders, so the next submission cannot read it."""
    if uid is None:
        return
    import shutil

    for folder in ("/dev/shm", "/tmp", "/var/tmp"):
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    shutil.rmtree(entry.path, ignore_errors=True)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


def _descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            tasks = os.open(f"/proc/{p}/task", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:  # names looked up from the open folder: procfs's path walk was most of the cost
            for task in os.listdir(tasks):
                children = os.open(f"{task}/children", os.O_RDONLY, dir_fd=tasks)
                try:
                    todo += [int(c) for c in os.read(children, 1 << 16).split()]
                finally:
                    os.close(children)
        except OSError:
            pass
        finally:
            os.close(tasks)
    return found


def _job_space(pid: int) -> int | None:
    """A descriptor on the job's temp space, opened from outside once the child is set up and before any
    learner code runs (its folder is then the child's working directory): it tells afterwards whether the
    job filled the space, whatever the job did to its own view of it."""
    try:
        return os.open(f"/proc/{pid}/cwd", os.O_PATH | os.O_DIRECTORY)
    except OSError:
        return None


def _space_notes(fd: int | None, tmp_mb: int) -> list[str]:
    """What the worker saw of the job's temp space (closing the descriptor frees the space)."""
    if fd is None:
        return []
    try:
        st = os.fstatvfs(fd)
    except OSError:
        return []
    finally:
        os.close(fd)
    if st.f_bavail * st.f_frsize < 2**20 or st.f_favail == 0:
        return [f"the run's temp space ({tmp_mb} MB) was full: writes in it failed with 'No space left on device'"]
    return []


def _channel_holders(pid: int, pipes: set[str], child_fds: dict[int, str]) -> list[str]:
    """What is wrong with the child's hold on the grader's pipes, read from outside (/proc): another of the
    job's processes holding one, a second descriptor for one, or a descriptor replaced."""
    wrong = []
    own: dict[int, str] = {}  # the child's descriptors as read below: each is read once
    for p in _descendants(pid):
        try:
            folder = os.open(f"/proc/{p}/fd", os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            continue
        try:
            for fd in os.listdir(folder):
                try:
                    target = os.readlink(fd, dir_fd=folder)
                except OSError:
                    continue
                if p == pid:
                    own[int(fd)] = target
                if target in pipes and (p != pid or child_fds.get(int(fd)) != target):
                    wrong.append(f"process {p} holds the grader's channel as descriptor {fd}")
        except OSError:
            pass  # the process is gone: it holds nothing
        finally:
            os.close(folder)
    for fd, target in child_fds.items():
        if fd not in own:  # not in the child's descriptors, or they could not be read: either way, not there
            wrong.append(f"descriptor {fd} of the grader's channel was closed")
        elif own[fd] != target:
            wrong.append(f"descriptor {fd} of the grader's channel was replaced")
    return wrong


class _Channel:
    """The parent's end of the results pipe: lines carrying the current nonce are the child's trusted
    code speaking; anything else was written by learner code and is a tampering flag."""

    LINE_CAP = CELL_CAP + STREAM_CAP * 4 + 4096
    CELL_BYTES = 4 * CELL_CAP

    def __init__(self, fd: int) -> None:
        self.fd, self.buf, self.nonce, self.eof = fd, b"", "", False
        self.received = 0
        self.emits: list[bytes] = []  # each emitted value as the JSON the child wrote
        self.tampered: list[str] = []
        self.result: bytes | None = None  # the cell's result, a JSON object as the child wrote it
        self.envelope = b"\0"
        self.ready = False
        self.asks_hidden = False

    def start(self, nonce: str, tampered: list[str]) -> None:
        """From now on, lines belong to the cell of `nonce`, with `tampered` its flags so far. Lines the
        child wrote after the last cell's result (it runs a batch of plain cells without waiting) are
        already here: they are read as this cell's."""
        self.nonce, self.emits, self.tampered, self.result = nonce, [], list(tampered), None
        self.envelope = b'{"n": "%s", "result": ' % nonce.encode()
        self.emit_envelope = b'{"n": "%s", "emit": ' % nonce.encode()
        self.asks_hidden = False
        self.received = len(self.buf)
        self._drain()

    def feed(self) -> bool:
        """Read what is there; False when the child wrote more than a cell may."""
        data = os.read(self.fd, 1 << 16)  # a pipe's default capacity: a larger buffer is only a larger allocation
        if not data:
            self.eof = True
            return True
        self.received += len(data)
        if self.received > self.CELL_BYTES:
            self.tampered.append("more data on the results channel than a cell may write")
            return False
        self.buf += data
        if b"\n" in data:
            self._drain()
        if len(self.buf) > self.LINE_CAP and b"\n" not in self.buf:
            self.tampered.append("an over-long line on the results channel")
            self.buf = b""
        return True

    def _drain(self) -> None:
        """Read the whole lines there are, up to this cell's result: what follows it is the next cell's."""
        buf, start = self.buf, 0
        while self.result is None and (end := buf.find(b"\n", start)) >= 0:
            self._line(buf[start:end])
            start = end + 1
        self.buf = buf[start:]  # one copy of what is left, not one for every line read

    def _line(self, line: bytes) -> None:
        envelope = self.envelope
        if self.nonce and line.startswith(envelope) and line.startswith(b'{"i": ', len(envelope)) \
                and line.endswith(b"}"):
            # The cell's result, kept as the bytes the child wrote (json.dumps of a dict that opens with "i"):
            # parsing its outputs here, only to write them out again, cost about a tenth of the worker's CPU.
            # The grader parses them, bounded, from the results file; a line carrying the nonce is the
            # child's trusted code (learner code that could read the nonce could forge any line anyway).
            self.result = line[len(envelope):-1]
            return
        if self.nonce and line.startswith(self.emit_envelope) and line.endswith(b"}"):
            # An emitted value, kept as written too (the guard's send: json.dumps of {"n", "emit"}, in that order).
            self.emits.append(line[len(self.emit_envelope):-1])
            return
        try:
            obj = json.loads(line)
        except (ValueError, RecursionError):
            obj = None
        if type(obj) is not dict or obj.get("n") != self.nonce or not self.nonce:
            self.tampered.append("data not written by the grader on the results channel")
            return
        if "ready" in obj:
            self.ready = True
        elif "visible_done" in obj:
            self.asks_hidden = True
        elif "emit" in obj:  # carries the nonce, but not as the guard writes a value
            self.tampered.append("a malformed emitted value on the results channel")
        elif "tampered" in obj and type(obj["tampered"]) is list:
            self.tampered += [str(t)[:300] for t in obj["tampered"][:20]]
        elif "result" in obj:  # carries the nonce, but not as the child writes a result
            self.tampered.append("a malformed result on the results channel")


def _record(i: int, result: bytes | None, emits: list[bytes], tampered: list[str]) -> bytes:
    """Cell `i`'s line of the results file: the child's result as it came, with the worker's keys (the values
    its checks emitted, as the child wrote them, the cell's index, what was tampered with) appended. JSON keeps
    the last of a repeated key, so these are what the grader reads, whatever the result held; a cell that did
    not report is "unfinished", and what it did say still counts against it. The line opens with the index
    as the worker's own bytes ("w"): if what the child sent does not parse (only a forged line with the
    cell's nonce can do that), the grader still knows whose record it was, and flags it (RECORD_OPENING)."""
    own: dict = {"i": i}
    if tampered:
        own["tampered"] = tampered[:20]
    tail = b'"emits": [' + b", ".join(emits) + b"], " + json.dumps(own, default=repr)[1:].encode()
    head = result[1:-1] + b", " if result is not None else b'"status": "unfinished", "outputs": [], '
    return b'{"w": %d, ' % i + head + tail + b"\n"


def _send(fd: int, obj: dict) -> bool:
    data = (json.dumps(obj) + "\n").encode()
    try:
        while data:
            data = data[os.write(fd, data):]
    except OSError:
        return False
    return True


def _split(cell: dict) -> tuple[str, str | None]:
    if type(cell) is str:
        return cell, None
    return str(cell.get("source", "")), cell.get("hidden")


def _take_job(jobdir: str) -> dict:
    """Read and delete job.json (root's, 0600). Called in the parent after the fork: the child never holds
    a cell it has not been sent, and the file is gone before the child runs any learner code."""
    job_path = os.path.join(jobdir, "job.json")
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    os.unlink(job_path)
    return job


def _fork_child(shell: GradeShell, spec: dict, snap: dict, cmd: tuple[int, int], res: tuple[int, int]) -> int:
    """Fork the job's child, which keeps the read end of `cmd` and the write end of `res`; its pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        os.close(cmd[1])
        os.close(res[0])
        try:
            run_child(shell, spec, cmd[0], res[1], snap)
        except BaseException as exc:
            try:
                os.write(2, f"sandbox child failed: {type(exc).__name__}: {exc}\n".encode())
            finally:
                os._exit(70)
    os.close(cmd[0])
    os.close(res[1])
    return pid


class _JobRun:
    """The parent's side of one job: the child, the pipe that sends it cells, the channel it reports on,
    and the clock (cell limits and the notebook's budget are kept here, whatever the child signals)."""

    def __init__(self, shell: GradeShell, spec: dict, snap: dict) -> None:
        self.spec = spec
        cmd, res = os.pipe2(os.O_CLOEXEC), os.pipe2(os.O_CLOEXEC)
        self.start = time.monotonic()
        self.pid = _fork_child(shell, spec, snap, cmd, res)
        self.cmd_w, self.res_r = cmd[1], res[0]
        self.job = _take_job(spec["dir"])
        # The child's descriptors (same numbers as ours before we closed them) and the pipes they must show.
        ours = {cmd[1]: os.readlink(f"/proc/self/fd/{cmd[1]}"), res[0]: os.readlink(f"/proc/self/fd/{res[0]}")}
        self.pipes = set(ours.values())
        self.child_fds = {cmd[0]: ours[cmd[1]], res[1]: ours[res[0]]}
        self.pidfd = os.pidfd_open(self.pid)
        self.chan = _Channel(self.res_r)
        self.poller = select.poll()  # registered once: select.select rebuilt its sets on every wake-up
        self.poller.register(self.pidfd, select.POLLIN)
        self.poller.register(self.res_r, select.POLLIN)
        self.results = os.open(spec["results"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)

    def set_up(self) -> str:
        """Send the seed; "ok" once the child says it is set up, else why not."""
        nonce = secrets.token_hex(16)
        self.chan.start(nonce, [])
        _send(self.cmd_w, {"seed": self.job["seed"], "nonce": nonce})
        return self.wait(True, None)

    def wait(self, until_ready: bool, cell_timeout: float | None, hidden: str | None = None) -> str:
        """Read the channel until the child is ready or the cell's result arrives; or why not. A checks
        cell's hidden block goes down when the child says the visible part has run."""
        chan, pid, start, budget = self.chan, self.pid, self.start, self.spec["budget"]
        sent = time.monotonic()
        interrupted_at = None
        while True:
            if hidden is not None and chan.asks_hidden:
                _send(self.cmd_w, {"hidden": hidden})
                hidden = None
            if (until_ready and chan.ready) or (not until_ready and chan.result is not None):
                return "ok"
            now = time.monotonic()
            if cell_timeout is None:
                deadline = min(start + SETUP_TIMEOUT, start + budget)
            elif interrupted_at is None:
                deadline = min(sent + cell_timeout, start + budget)
            else:
                deadline = min(interrupted_at + 2.0, start + budget)
            if now >= deadline:
                if now >= start + budget:
                    return "budget"
                if cell_timeout is not None and interrupted_at is None:
                    os.kill(pid, signal.SIGINT)  # like Jupyter: a loop in one cell costs only that cell
                    interrupted_at = now
                    continue
                return "timeout"
            ready = [fd for fd, _ in self.poller.poll(math.ceil((deadline - now) * 1000))]
            if self.res_r in ready:
                if not chan.feed():
                    return "output_limit"
                if chan.eof:
                    self.poller.unregister(self.res_r)  # a closed pipe polls readable for ever
                continue
            if self.pidfd in ready:
                while not chan.eof and select.select([self.res_r], [], [], 0)[0]:
                    if not chan.feed():
                        break
                if (until_ready and chan.ready) or (not until_ready and chan.result is not None):
                    return "ok"
                return "exited"

    def run_cells(self) -> str:
        """Every cell in order, until one does not end well; the run's status. A run of plain cells goes to
        the child in one message, which it runs without waiting for the parent between them; a checks cell
        goes alone, after the channel has been checked again."""
        cells = [_split(cell) for cell in self.job["cells"]]
        i = 0
        while i < len(cells):
            j = i + 1
            while cells[i][1] is None and j < len(cells) and cells[j][1] is None:
                j += 1
            state = self.run_batch(i, cells[i:j])
            if state != "ok":
                return state if state in ("output_limit", "timeout", "budget") else "exited"
            i = j
        _send(self.cmd_w, {"end": True})
        select.select([self.pidfd], [], [], 5.0)
        return "exited"

    def run_batch(self, first: int, cells: list[tuple[str, str | None]]) -> str:
        """Send cells `first`, `first + 1`, ...; wait for each one's end (its cell limit counts from the
        previous one's end) and write what it reported to the results file; "ok" or why not."""
        chan = self.chan
        wrong = _channel_holders(self.pid, self.pipes, self.child_fds)
        nonces = [secrets.token_hex(16) for _ in cells]
        chan.start(nonces[0], wrong)  # what arrives from now on (old nonces included) belongs to the first cell
        batch = [{"i": first + k, "nonce": nonce, "source": source, "hidden": hidden is not None}
                 for k, (nonce, (source, hidden)) in enumerate(zip(nonces, cells))]
        if not _send(self.cmd_w, {"cells": batch}):
            return "exited"
        for k, (nonce, (_, hidden)) in enumerate(zip(nonces, cells)):
            i = first + k
            if k:
                chan.start(nonce, [])
            state = self.wait(False, self.spec["cell_timeout"], hidden)
            if chan.result is not None or chan.tampered or chan.emits:
                os.write(self.results, _record(i, chan.result, chan.emits, chan.tampered))
            if state != "ok":
                return state
        return "ok"

    def end(self) -> int:
        """Kill every process of the job, reap the child, remove what it left; its wait status."""
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        _kill_uid(self.spec.get("uid"), self.pid)
        if self.spec.get("uid") is not None:
            # The job's folder outside its temp space is its uid's, and is removed by the grader only while the
            # next job, run as the same uid, already runs: that job could enter it (the name is predictable),
            # read what was left there and write outside its own temp space. Root's from here on.
            try:
                os.chown(self.spec["dir"], 0, 0)
                os.chmod(self.spec["dir"], 0o700)
            except OSError:
                pass
        _, wstatus = os.waitpid(self.pid, 0)
        _sweep(self.spec.get("uid"))
        for fd in (self.pidfd, self.res_r, self.cmd_w, self.results):
            os.close(fd)
        return wstatus


def run_job(shell: GradeShell, spec: dict, snap: dict) -> dict:
    """Fork a child for one job; send it the cells (runs of plain cells, each checks cell alone); write what
    it reported, cell by cell, to spec["results"] (a file of the grader's, outside the job's folder). The
    reply's status is one of grader.wire.RunStatus (this file imports nothing from the grader, so it names
    them as strings)."""
    run = _JobRun(shell, spec, snap)
    state = run.set_up()
    space = _job_space(run.pid) if state == "ok" and spec.get("isolate") else None
    if state == "ok":
        status = run.run_cells()
    else:
        status = state if state in ("timeout", "budget") else "exited"
    wstatus = run.end()
    notes = _space_notes(space, int(spec.get("tmp_mb") or 0))
    reply = {"id": spec["id"], "status": status, "seconds": round(time.monotonic() - run.start, 3)}
    if notes:
        reply["notes"] = notes
    if os.WIFSIGNALED(wstatus):
        reply["signal"] = os.WTERMSIG(wstatus)
    else:
        reply["code"] = os.WEXITSTATUS(wstatus)
    return reply


def settle() -> None:
    """The last step before the first fork: pay for lazy set-up here, once, not in every child, and move
    everything alive now out of the garbage collector's reach (gc.freeze). A collection in a child then
    never walks, and so never copies, the pages of the warm process's objects; those objects live as long
    as the worker anyway. Measured on chapter 1's six solution notebooks: their cells about 5% faster."""
    import gc

    _seed_everything(0)
    gc.freeze()  # no collection first: it took 0.2 s of start-up and found 25 objects
    _huge_pages()


MADV_COLLAPSE = 25
HUGE = 2 * 2**20  # x86-64's and arm64's (4 KiB base pages) transparent huge page


def _huge_pages() -> None:
    """Back the warm process's anonymous memory (the heap: about 220 MB of torch's and Python's objects for
    chapter 1) with transparent huge pages, once. fork copies one page-table entry per 2 MiB,
    not one per 4 KiB, and a child's exit frees as few: on chapter 1, fork fell from 5 to 1.3 ms and a small
    child's run and exit from 10.4 to 5.9 ms. A child's write to a huge page still copies only 4 KiB (the
    kernel splits the entry first, since Linux 5.8). Only memory there now is collapsed: the regions are not
    marked MADV_HUGEPAGE, so what a child allocates later gets ordinary pages, as before. MADV_COLLAPSE needs
    Linux 6.1; where it fails (an older kernel, say) the memory stays as it was: correct, only slower."""
    madvise = _libc.madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    try:
        with open("/proc/self/maps") as f:
            regions = f.read().splitlines()
    except OSError:
        return
    for line in regions:
        fields = line.split()
        if len(fields) < 5 or "w" not in fields[1] or (len(fields) > 5 and fields[5] != "[heap]"):
            continue  # files, the stack, vdso: not ours to change
        lo, hi = (int(x, 16) for x in fields[0].split("-"))
        lo, hi = (lo + HUGE - 1) & ~(HUGE - 1), hi & ~(HUGE - 1)
        if hi > lo:
            madvise(lo, hi - lo, MADV_COLLAPSE)  # a failure leaves the region as it was


JOB_CPUS: set[int] = set()  # the CPUs a job runs on, when the worker keeps to one of them (see _keep_to_cpu)


def _keep_to_cpu(cpu: str | None) -> None:
    """Run the worker process on `cpu` alone (the grader's choice, one per worker); its jobs get back the
    CPUs it had before. A job and the worker hand each other every cell and every line of results: with the
    worker always on the CPU it last ran on, the hand-over rarely needs another CPU woken (about 70 us
    here, in a virtual machine, against 4 us on one CPU). Nothing happens where the CPU cannot be set."""
    if not cpu:
        return
    try:
        everything = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {int(cpu)})
    except (OSError, ValueError):
        return
    JOB_CPUS.update(everything)


def _oom_score(value: str) -> None:
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write(value)
    except OSError:
        pass


def main() -> None:
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the grader died: so do we
    _oom_score("-1000")  # when a submission's cgroup runs out of memory, the kernel kills the job, not us
    _keep_to_cpu(os.environ.get("TORCHCOURSE_WORKER_CPU"))
    shell = make_shell()
    snap = _snapshot()
    job_ns = _job_namespaces_here()
    settle()
    out = sys.stdout
    out.write(json.dumps({"ready": True, "pid": os.getpid(), "uid": os.getuid(), "torch": torch.__version__,
                          "preload_errors": PRELOAD_ERRORS, "job_ns": job_ns}) + "\n")
    out.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        spec = json.loads(line)
        try:
            reply = run_job(shell, spec, snap)
        except Exception as exc:  # a broken job must not take the worker down
            reply = {"id": spec.get("id"), "status": "worker_error", "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
