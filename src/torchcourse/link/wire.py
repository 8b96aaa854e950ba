"""What travels between the checker and the learner's process: length-prefixed JSON messages, their bounds,
and the names of the libraries whose functions travel by name."""

from __future__ import annotations

import base64
import builtins
import importlib
import json
import math
import socket
import struct
import sys
import types
from typing import Any

import numpy as np
import torch

#: The largest message either side accepts, in bytes: a reply past it is an error of the call.
MESSAGE_CAP = 64 << 20
#: Elements of one tensor's storage that may travel (an argument's or a result's).
ELEMENTS_CAP = 8 << 20
#: Nesting of containers in one value.
DEPTH_CAP = 64

_LIBRARIES = ("torch", "numpy", "math", "operator", "_operator", "builtins", "functools", "torchcourse", "copy", "re",
              "random", "itertools", "collections")
_BUILTIN_NAMES = frozenset(dir(builtins))


def _all_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if type(const) is types.CodeType:
            names |= _all_names(const)
    return names


class LinkError(RuntimeError):
    """The learner's process sent what cannot be read, or the link broke."""


class NotSendable(TypeError):
    """A value of the checker's that cannot go to learner code (a function defined in a checks cell)."""



# --------------------------------------------------------------------------- framing


def send_message(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj, allow_nan=False).encode()
    sock.sendall(struct.pack("<Q", len(data)) + data)


def _more(sock: socket.socket, pending: bytearray, n: int) -> None:
    chunk = sock.recv(n)
    if not chunk:
        raise LinkError("the learner's process closed the link")
    pending += chunk


def recv_message(sock: socket.socket, pending: bytearray) -> Any:
    """The next message; `pending`, the bytes read from `sock` beyond the last message (this end's own buffer).
    A small message comes in one read, its length and body together: a read is a system call, and a checks
    cell makes hundreds of calls, each a message each way."""
    while len(pending) < 8:
        _more(sock, pending, 1 << 16)
    (size,) = struct.unpack_from("<Q", pending)
    if size > MESSAGE_CAP:
        raise LinkError(f"a message of {size} bytes is over the link's limit of {MESSAGE_CAP}")
    while len(pending) < 8 + size:
        _more(sock, pending, min(8 + size - len(pending), 1 << 20))
    body = bytes(pending[8:8 + size])
    del pending[:8 + size]
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise LinkError(f"a message that is not plain data: {type(exc).__name__}") from None


# --------------------------------------------------------------------------- small pieces of values
# A tensor's facts are read through the class's own functions, bound when this module is imported (before any
# learner code runs): a method set on one tensor (`t.untyped_storage = ...`) or on the class later does not
# change what is read. Properties (shape, dtype, requires_grad, grad, is_leaf) cannot be shadowed by an
# instance attribute.
_TB = torch._C.TensorBase
numel, stride, storage_offset, untyped_storage = _TB.numel, _TB.stride, _TB.storage_offset, _TB.untyped_storage
detach, as_strided, clone, view, to_numpy = _TB.detach, _TB.as_strided, _TB.clone, _TB.view, _TB.numpy
element_size = _TB.element_size
storage_ptr, storage_nbytes = torch.UntypedStorage.data_ptr, torch.UntypedStorage.nbytes


def _float(x: float) -> Any:
    return x if math.isfinite(x) else {"f": repr(x)}


def _storage_span(t: torch.Tensor) -> int:
    if numel(t) == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, stride(t)))


def _raw_bytes(t: torch.Tensor) -> tuple[bytes, int]:
    """The elements a tensor's view covers, from its storage offset on, as bytes; and their count."""
    span = _storage_span(t)
    if span > ELEMENTS_CAP:
        raise NotSendable(f"a tensor over {ELEMENTS_CAP} elements")
    flat = clone(as_strided(detach(t), (span,), (1,), storage_offset(t)))
    return (to_numpy(view(flat, torch.uint8)).tobytes() if span else b""), span


def _tensor_bytes(t: torch.Tensor) -> tuple[str, int]:
    """The elements a tensor's view covers, from its storage offset on, as base64; and their count."""
    data, span = _raw_bytes(t)
    return base64.b64encode(data).decode(), span


def fingerprint(v: Any) -> tuple | None:
    """Everything of a tensor or array that a call could change in place and the other side would see: its
    type, dtype, shape, strides, offset, autograd flags, elements and gradient. Two equal fingerprints: the
    same value. None when it cannot be taken."""
    try:
        if type(v) is np.ndarray:
            return ("nd", v.dtype.str, v.shape, v.strides, np.ascontiguousarray(v).tobytes())
        grad = v.grad if v.is_leaf else None  # .grad of a non-leaf only warns
        return (type(v), v.dtype, tuple(v.shape), stride(v), storage_offset(v), v.requires_grad, v.is_leaf,
                _raw_bytes(v)[0], None if grad is None else fingerprint(grad))
    except Exception:
        return None


def _dtype(name: str) -> torch.dtype:
    dt = getattr(torch, name.removeprefix("torch."), None)
    if type(dt) is not torch.dtype:
        raise LinkError(f"no dtype {name!r}")
    return dt


def _list(v: Any) -> list:
    if type(v) is not list:
        raise LinkError("a value that is not plain data")
    return v


def _span(shape, stride) -> int:
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride))


def _flat_len(t) -> int:
    if type(t) is np.ndarray:
        return t.size
    return storage_nbytes(untyped_storage(t)) // max(element_size(t), 1)


def _numpy_dtype(dt: torch.dtype):
    try:
        return torch.empty((), dtype=dt).numpy().dtype
    except (TypeError, RuntimeError):
        return None


_EXCEPTIONS: dict[tuple, type] = {}


def _exception(body: dict) -> BaseException:
    """The learner's exception as the checker's: a class of the same name, below the nearest built-in one."""
    name = str(body.get("name", "Exception"))[:200]
    base = next((getattr(builtins, b) for b in body.get("bases", []) if isinstance(getattr(builtins, str(b), None),
                                                                                     type)
                 and issubclass(getattr(builtins, str(b)), BaseException)), Exception)
    if name == base.__name__:
        cls = base
    else:
        cls = _EXCEPTIONS.setdefault((name, base), type(name, (base,), {"__module__": "learner"}))
    return cls(str(body.get("msg", "")))


def _library_ref(v: Any) -> list | None:
    """[module, qualname] for a function or class of a library, when importing it by that name gives it."""
    module, qualname = getattr(v, "__module__", None), getattr(v, "__qualname__", None)
    if type(module) is not str or type(qualname) is not str or "<" in qualname:
        return None
    if module.split(".")[0] not in _LIBRARIES:
        return None
    try:
        found = _resolve([module, qualname])
    except Exception:
        return None
    return [module, qualname] if found is v or found == v else None


_RESOLVED: dict[tuple[str, str], Any] = {}


def _resolve(ref: Any, loaded_only: bool = False) -> Any:
    """A library's function or class by [module, qualname]. `loaded_only` (the checker reading a name the
    learner's process sent): only from a module already loaded, so that nothing is imported on its word.
    Found once per process (most calls name an operator or a torch function, again and again)."""
    module, qualname = (str(x) for x in _list(ref))
    found = _RESOLVED.get((module, qualname))
    if found is not None:
        return found
    found = _RESOLVED[(module, qualname)] = _resolved(module, qualname, loaded_only)
    return found


def _resolved(module: str, qualname: str, loaded_only: bool) -> Any:
    if module.split(".")[0] not in _LIBRARIES:
        raise LinkError(f"{module} is not a library")
    if loaded_only:
        if module not in sys.modules:
            raise LinkError(f"{module} is not loaded here")
        obj = sys.modules[module]
    else:
        obj = importlib.import_module(module)
    for part in qualname.split("."):
        if part.startswith("__"):
            raise LinkError(f"{qualname} is not a public name")
        obj = getattr(obj, part)
    return obj


