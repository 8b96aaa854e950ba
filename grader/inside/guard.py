"""The integrity guard: a snapshot of the libraries hidden checks rely on, taken before any learner code, and
the audit hook that records tampering and carries emitted values to the parent."""

from __future__ import annotations

import ctypes
import json
import os
import sys
from _thread import get_ident as _thread_ident

import torch
from IPython.core.displayhook import DisplayHook
from IPython.core.displaypub import DisplayPublisher
from IPython.core.interactiveshell import InteractiveShell

from .policy import ALWAYS, CANONICAL, CODE_ATTRS, FRAME_ATTRS, GUARDED, LEARNER, LIBRARY_NAMES, WATCHED
from .shell import GradeShell, _Collector, _Hook, _Publisher, _Sink

# Advice, not protection. No verdict depends on this process any more: checks cells run in the checker
# (checker.py), which reaches learner code only through plain-data requests, and only the checker's emitted
# values are judged. What stays here flags plain patching early, for the instructor: an audit hook (PEP 578)
# records frame and traceback introspection, trace and profile functions, gc walks, ctypes, reading process
# memory and writes to library classes from notebook code, and at each checks cell the identities of the
# libraries' functions, the notebook's names for them, torch's mode stacks and trace functions are compared
# with a snapshot taken before any learner code ran. Learner code shares this process and can get round any
# of it; that only loses it the flag. What is watched and which events count are rows of policy.py.

# What IPython itself swaps while a cell runs (its builtin and display traps): not tampering.
TRAPPED = frozenset({"builtins.exit", "builtins.quit", "builtins.get_ipython", "builtins.display",
                     "sys.displayhook", "sys.excepthook", "sys.breakpointhook"})
# Introspection helpers a learner may call instead of sys._getframe: the event is theirs, not the helper's.
# (traceback.py reads tb_frame to print an exception the learner caught: honest, so not counted there.)
HELPER_FILES = ("/inspect.py", "/traceback.py", "/ctypes/__init__.py")
TB_HELPER_FILES = ("/inspect.py",)


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


def make_guard(shell: GradeShell, snap: dict, fd: int, grading):
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

    def rebind() -> None:
        """A template's fork: its own results pipe now holds the number `fd` (grader/inside/template.py)."""
        nonlocal ino
        ino = (fstat(fd).st_dev, fstat(fd).st_ino)

    state["rebind"] = rebind  # taken out again by the child before any cell runs (child.run_child)

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
