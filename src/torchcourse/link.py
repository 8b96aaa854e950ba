"""Calls from the grader's checker into learner code, with nothing but plain data between them.

Under the grader, a checks cell runs in a process of its own, the *checker*, which never runs learner code.
Each name of the learner's answers is a `Remote` there: calling it (or reading an attribute, or applying an
operator) sends the request to the learner's process as plain data and decodes the reply as plain data.
Tensors, arrays, numbers, strings and containers of them travel as values; anything else stays in the
learner's process and comes back as a handle, another `Remote`. A function of a library (torch, NumPy, the
course's own modules) travels as its name and is imported again on the other side; a function defined in a
checks cell never travels: it runs in the checker.

What the checker decodes is data it owns. A result that shares memory with an argument is decoded as a
view of the checker's own argument (so "is it a view?" is measured in memory the checker owns), and each
argument's state after the call (values, ``requires_grad``, ``grad``) is written back into the checker's
own object, so "did the call change its input?" is too.

Outside the grader (a learner's kernel, plain nbgrader) nothing here is used: answers are plain functions.
"""

from __future__ import annotations

import base64
import builtins
import functools
import importlib
import json
import marshal
import math
import operator
import socket
import struct
import types
import warnings
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


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks, got = [], 0
    while got < n:
        chunk = sock.recv(min(n - got, 1 << 20))
        if not chunk:
            raise LinkError("the learner's process closed the link")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def recv_message(sock: socket.socket) -> Any:
    (size,) = struct.unpack("<Q", _recv_exact(sock, 8))
    if size > MESSAGE_CAP:
        raise LinkError(f"a message of {size} bytes is over the link's limit of {MESSAGE_CAP}")
    try:
        return json.loads(_recv_exact(sock, size))
    except (ValueError, RecursionError) as exc:
        raise LinkError(f"a message that is not plain data: {type(exc).__name__}") from None


# --------------------------------------------------------------------------- values


def _float(x: float) -> Any:
    return x if math.isfinite(x) else {"f": repr(x)}


def _storage_span(t: torch.Tensor) -> int:
    if t.numel() == 0:
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))


def _tensor_bytes(t: torch.Tensor) -> tuple[str, int]:
    """The elements a tensor's view covers, from its storage offset on, as base64; and their count."""
    span = _storage_span(t)
    if span > ELEMENTS_CAP:
        raise NotSendable(f"a tensor over {ELEMENTS_CAP} elements")
    flat = t.detach().as_strided((span,), (1,), t.storage_offset()).clone()
    data = flat.view(torch.uint8).numpy().tobytes() if span else b""
    return base64.b64encode(data).decode(), span


def _dtype(name: str) -> torch.dtype:
    dt = getattr(torch, name.removeprefix("torch."), None)
    if type(dt) is not torch.dtype:
        raise LinkError(f"no dtype {name!r}")
    return dt


class Codec:
    """Encodes values for the other side and decodes what it sent. `handles` turns an object that is not plain
    data into a reference (the learner's side keeps the object); `remote` turns a reference back into the
    checker's `Remote`. `args` are the (decoded) arguments of the call being answered: a result that shares
    memory with one of them is sent as a view of it, by position."""

    def __init__(self, handles=None, remote=None) -> None:
        self.handles, self.remote = handles, remote
        self.args: list = []

    # ----- encode
    def encode(self, v: Any, depth: int = 0) -> Any:
        if depth > DEPTH_CAP:
            raise NotSendable("a value nested too deep")
        t = type(v)
        if v is None or t is bool or t is int or t is str:
            return v
        if t is float:
            return _float(v)
        if t is complex:
            return {"c": [_float(v.real), _float(v.imag)]}
        if t is tuple:
            return {"t": [self.encode(x, depth + 1) for x in v]}
        if t is list:
            return {"l": [self.encode(x, depth + 1) for x in v]}
        if t is dict:
            return {"d": [[self.encode(k, depth + 1), self.encode(x, depth + 1)] for k, x in v.items()]}
        if t is torch.Size:
            return {"size": [int(n) for n in v]}
        if t is torch.dtype:
            return {"dtype": str(v)}
        if t is torch.device:
            return {"device": str(v)}
        if t is slice:
            return {"slice": [self.encode(v.start), self.encode(v.stop), self.encode(v.step)]}
        if v is Ellipsis:
            return {"ellipsis": True}
        if t in (torch.Tensor, torch.nn.Parameter):
            return self._encode_tensor(v)
        if t is np.ndarray and v.dtype.kind in "biufc":
            return self._encode_array(v)
        if isinstance(v, np.generic) and t.__module__ == "numpy" and v.dtype.kind in "biufc":
            return {"npscalar": str(v.dtype), "data": base64.b64encode(v.tobytes()).decode()}
        if isinstance(v, BaseException):
            return self._encode_exception(v)
        if isinstance(v, Remote):
            return {"h": v._id}
        if t is functools.partial:
            return {"partial": [self.encode(v.func, depth + 1), self.encode(list(v.args), depth + 1),
                                self.encode(dict(v.keywords), depth + 1)]}
        ref = _library_ref(v)
        if ref is not None:
            return {"ref": ref}
        if t is types.ModuleType and v.__name__.split(".")[0] in _LIBRARIES:
            return {"module": v.__name__}
        if self.handles is not None:
            return self.handles(v)
        if t is types.FunctionType:
            return self._encode_function(v, depth)
        raise NotSendable(f"a {t.__module__}.{t.__qualname__} cannot be sent to learner code: only plain data, "
                          f"library functions and the learner's own objects can")

    def _encode_function(self, fn: types.FunctionType, depth: int) -> dict:
        """A function of the checks cell given to learner code (a function to differentiate, a driver that
        builds what the answer is called with): it is an input, and travels as its code, with its defaults,
        closure and the globals it names, each encoded in turn."""
        code = fn.__code__
        names = _all_names(code)  # with the names its nested functions and lambdas use
        glob = {k: self.encode(fn.__globals__[k], depth + 1) for k in sorted(names)
                if k in fn.__globals__ and k not in _BUILTIN_NAMES}
        closure = [self.encode(c.cell_contents, depth + 1) for c in fn.__closure__ or ()]
        return {"fn": {"code": base64.b64encode(marshal.dumps(code)).decode(), "name": fn.__name__,
                       "defaults": self.encode(fn.__defaults__, depth + 1),
                       "kwdefaults": self.encode(fn.__kwdefaults__, depth + 1), "closure": closure,
                       "globals": glob}}

    def _alias(self, t: torch.Tensor) -> dict | None:
        if t.numel() == 0:
            return None
        ptr = t.untyped_storage().data_ptr()
        for k, arg in enumerate(self.args):
            if type(arg) in (torch.Tensor, torch.nn.Parameter) and arg.untyped_storage().data_ptr() == ptr \
                    and arg.dtype == t.dtype:
                before = arg._version
                torch.autograd.graph.increment_version(t)
                same_counter = arg._version != before
                return {"arg": k, "offset": t.storage_offset(), "version": same_counter}
            if type(arg) is np.ndarray and arg.size and arg.dtype == _numpy_dtype(t.dtype):
                base = arg.__array_interface__["data"][0] - _array_start(arg)
                if ptr == base:
                    return {"arg": k, "offset": t.storage_offset(), "version": False}
        return None

    def _encode_tensor(self, t: torch.Tensor) -> dict:
        if t.layout != torch.strided or t.is_quantized or t.device.type != "cpu":
            raise NotSendable("only dense CPU tensors can be sent")
        out: dict[str, Any] = {"dtype": str(t.dtype), "shape": list(t.shape), "stride": list(t.stride()),
                               "rg": t.requires_grad, "leaf": t.is_leaf}
        if type(t) is torch.nn.Parameter:
            out["param"] = True
        alias = self._alias(t)
        if alias is not None:
            out["alias"] = alias
        else:
            out["data"], out["span"] = _tensor_bytes(t)
            out["offset"] = t.storage_offset() if t.storage_offset() <= ELEMENTS_CAP else 0
        if t.is_leaf and t.grad is not None:
            out["grad"] = self._encode_tensor(t.grad.detach())
        return {"tensor": out}

    def _encode_array(self, a: np.ndarray) -> dict:
        out: dict[str, Any] = {"dtype": str(a.dtype), "shape": list(a.shape),
                               "strides": [s // a.itemsize for s in a.strides] if a.itemsize else []}
        alias = self._alias_array(a)
        if alias is not None:
            out["alias"] = alias
        else:
            if a.size > ELEMENTS_CAP:
                raise NotSendable(f"an array over {ELEMENTS_CAP} elements")
            out["data"] = base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()
        return {"nd": out}

    def _alias_array(self, a: np.ndarray) -> dict | None:
        if a.size == 0 or any(s < 0 for s in a.strides):
            return None
        start = a.__array_interface__["data"][0]
        for k, arg in enumerate(self.args):
            if type(arg) in (torch.Tensor, torch.nn.Parameter) and arg.numel() and \
                    _numpy_dtype(arg.dtype) == a.dtype:
                base = arg.untyped_storage().data_ptr()
                if base <= start < base + arg.untyped_storage().nbytes():
                    return {"arg": k, "offset": (start - base) // a.itemsize}
            if type(arg) is np.ndarray and arg.size and arg.dtype == a.dtype:
                base = arg.__array_interface__["data"][0] - _array_start(arg)
                if np.shares_memory(a, arg) and start >= base:
                    return {"arg": k, "offset": (start - base) // a.itemsize}
        return None

    def _encode_exception(self, e: BaseException) -> dict:
        bases = [c.__name__ for c in type(e).__mro__ if c.__module__ == "builtins"]
        return {"exc": {"name": type(e).__name__[:200], "bases": bases[:20], "msg": str(e)[:100_000]}}

    # ----- decode
    def decode(self, v: Any, depth: int = 0) -> Any:
        if depth > DEPTH_CAP:
            raise LinkError("a value nested too deep")
        if v is None or type(v) in (bool, int, str, float):
            return v
        if type(v) is not dict or len(v) == 0:
            raise LinkError("a value that is not plain data")
        kind = next(iter(v))
        body = v[kind]
        if kind == "f":
            return float(body) if body in ("nan", "inf", "-inf") else _bad(body)
        if kind == "c":
            return complex(self.decode(body[0], depth + 1), self.decode(body[1], depth + 1))
        if kind == "t":
            return tuple(self.decode(x, depth + 1) for x in _list(body))
        if kind == "l":
            return [self.decode(x, depth + 1) for x in _list(body)]
        if kind == "d":
            return {self.decode(k, depth + 1): self.decode(x, depth + 1) for k, x in _list(body)}
        if kind == "size":
            return torch.Size([int(n) for n in _list(body)])
        if kind == "dtype":
            return _dtype(str(body))
        if kind == "device":
            return torch.device(str(body))
        if kind == "slice":
            return slice(*(self.decode(x, depth + 1) for x in _list(body)))
        if kind == "ellipsis":
            return Ellipsis
        if kind == "tensor":
            return self._decode_tensor(body, depth)
        if kind == "nd":
            return self._decode_array(body)
        if kind == "npscalar":
            return np.frombuffer(base64.b64decode(body), dtype=np.dtype(str(v["npscalar"])))[0] \
                if False else np.frombuffer(base64.b64decode(v["data"]), dtype=np.dtype(str(body)))[0]
        if kind == "exc":
            return _exception(body)
        if kind == "h":
            if self.remote is None:
                return self.handles_lookup(body)
            return self.remote(int(body), v.get("type", ""))
        if kind == "ref":
            return _resolve(body)
        if kind == "module":
            if str(body).split(".")[0] not in _LIBRARIES:
                raise LinkError(f"{body} is not a library")
            return importlib.import_module(str(body))
        if kind == "fn" and self.remote is None:  # only the learner's side builds a function it was sent
            glob = {"__builtins__": builtins}
            glob.update({str(k): self.decode(x, depth + 1) for k, x in body["globals"].items()})
            code = marshal.loads(base64.b64decode(body["code"]))
            closure = tuple(types.CellType(self.decode(x, depth + 1)) for x in body["closure"]) or None
            fn = types.FunctionType(code, glob, str(body["name"]), self.decode(body["defaults"], depth + 1),
                                    closure)
            fn.__kwdefaults__ = self.decode(body["kwdefaults"], depth + 1)
            return fn
        if kind == "partial":
            fn, args, kwargs = (self.decode(x, depth + 1) for x in _list(body))
            return functools.partial(fn, *args, **kwargs)
        raise LinkError(f"a value of unknown kind {kind!r}")

    handles_lookup = None  # the learner's side: a handle back to its object

    def _decode_tensor(self, b: dict, depth: int) -> torch.Tensor:
        dtype = _dtype(str(b["dtype"]))
        shape, stride = [int(n) for n in b["shape"]], [int(s) for s in b["stride"]]
        if len(shape) != len(stride) or any(n < 0 for n in shape) or any(s < 0 for s in stride):
            raise LinkError("a tensor with an impossible shape")
        alias = b.get("alias")
        if alias is not None:
            own = self._argument(alias, (torch.Tensor, torch.nn.Parameter, np.ndarray))
            base = torch.from_numpy(own) if type(own) is np.ndarray else \
                (own.detach() if alias.get("version") else own.data)
            flat = base.as_strided((_flat_len(base),), (1,), 0) if type(own) is np.ndarray else base
            t = torch.as_strided(flat, shape, stride, int(alias["offset"]))
            if _storage_span(t) + t.storage_offset() > _flat_len(base) + base.storage_offset():
                raise LinkError("a view past the end of its argument")
        else:
            span, offset = int(b["span"]), int(b.get("offset", 0))
            if span > ELEMENTS_CAP or offset > ELEMENTS_CAP or span != _span(shape, stride):
                raise LinkError("a tensor whose data does not match its shape")
            raw = base64.b64decode(b["data"])
            elem = torch.empty((), dtype=dtype).element_size()
            if len(raw) != span * elem:
                raise LinkError("a tensor whose data does not match its shape")
            store = torch.empty(offset + span, dtype=dtype)
            if span:
                store[offset:] = torch.frombuffer(bytearray(raw), dtype=torch.uint8).view(dtype)
            t = torch.as_strided(store, shape, stride, offset)
        if b.get("rg") and (dtype.is_floating_point or dtype.is_complex):
            if b.get("leaf", True):
                t = t.requires_grad_() if t._base is None else t.detach().requires_grad_()
            else:
                t = t.detach().requires_grad_()[...]  # not a leaf: part of a graph, as it was
        if b.get("param"):
            t = torch.nn.Parameter(t.detach(), requires_grad=bool(b.get("rg")))
        if "grad" in b and t.is_leaf:
            grad = self._decode_tensor(b["grad"]["tensor"], depth + 1)
            if grad.shape == t.shape and grad.dtype == t.dtype:
                t.grad = grad
        return t

    def _decode_array(self, b: dict) -> np.ndarray:
        dtype = np.dtype(str(b["dtype"]))
        if dtype.kind not in "biufc":
            raise LinkError("an array that is not of numbers")
        shape, strides = [int(n) for n in b["shape"]], [int(s) for s in b["strides"]]
        alias = b.get("alias")
        if alias is not None:
            own = self._argument(alias, (torch.Tensor, torch.nn.Parameter, np.ndarray))
            if type(own) is np.ndarray:
                base = own.reshape(-1) if own.flags.c_contiguous else None
                if base is None:
                    raise LinkError("a view of an array that is not contiguous")
                base_start = 0
            else:
                whole = own.detach().as_strided((_flat_len(own),), (1,), 0)
                base, base_start = whole.numpy(), 0
            offset = int(alias["offset"]) - base_start
            if offset < 0 or offset + _span(shape, strides) > base.size:
                raise LinkError("a view past the end of its argument")
            return np.lib.stride_tricks.as_strided(base[offset:], shape, [s * dtype.itemsize for s in strides])
        raw = base64.b64decode(b["data"])
        n = math.prod(shape)
        if n > ELEMENTS_CAP or len(raw) != n * dtype.itemsize:
            raise LinkError("an array whose data does not match its shape")
        dense = np.frombuffer(bytearray(raw), dtype=dtype).reshape(shape)
        if dense.size and strides and strides != [s // dtype.itemsize for s in dense.strides]:
            # the same values with the sender's element strides (a transposed or sliced array stays one)
            order = sorted(range(len(shape)), key=lambda d: -strides[d])
            base = np.empty(_span(shape, strides), dtype=dtype)
            view = np.lib.stride_tricks.as_strided(base, shape, [s * dtype.itemsize for s in strides])
            if len(set(order)) == len(order):
                view[...] = dense
                return view
        return dense

    def _argument(self, alias: dict, kinds: tuple) -> Any:
        k = alias.get("arg")
        if type(k) is not int or not 0 <= k < len(self.args) or type(self.args[k]) not in kinds:
            raise LinkError("a view of an argument that is not there")
        return self.args[k]


def _list(v: Any) -> list:
    if type(v) is not list:
        raise LinkError("a value that is not plain data")
    return v


def _bad(v: Any):
    raise LinkError(f"not a float: {v!r}")


def _span(shape, stride) -> int:
    if any(n == 0 for n in shape):
        return 0
    return 1 + sum((n - 1) * s for n, s in zip(shape, stride))


def _flat_len(t) -> int:
    if type(t) is np.ndarray:
        return t.size
    return t.untyped_storage().nbytes() // max(t.element_size(), 1)


def _array_start(a: np.ndarray) -> int:
    return 0


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


def _resolve(ref: Any) -> Any:
    module, qualname = (str(x) for x in _list(ref))
    if module.split(".")[0] not in _LIBRARIES:
        raise LinkError(f"{module} is not a library")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


# --------------------------------------------------------------------------- the checker's side


class Remote:
    """An object of the learner's process, seen from the checker: every use is a request over the link."""

    __slots__ = ("_link", "_id", "_type")

    def __init__(self, link: "CheckerLink", id_: int, type_name: str = "") -> None:
        object.__setattr__(self, "_link", link)
        object.__setattr__(self, "_id", id_)
        object.__setattr__(self, "_type", type_name)

    def __call__(self, *args, **kwargs):
        return self._link.call(self, args, kwargs)

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        return self._link.call(getattr, (self, name), {})

    def __setattr__(self, name: str, value) -> None:
        self._link.call(setattr, (self, name, value), {})

    def __getitem__(self, key):
        return self._link.call(operator.getitem, (self, key), {})

    def __iter__(self):
        return iter(self._link.call(list, (self,), {}))

    def __len__(self):
        return self._link.call(len, (self,), {})

    def __float__(self):
        return self._link.call(float, (self,), {})

    def __int__(self):
        return self._link.call(int, (self,), {})

    def __bool__(self):
        return self._link.call(bool, (self,), {})

    def __repr__(self) -> str:
        return f"<learner's {self._type or 'object'}>"


def _binary(op):
    def forward(self, other):
        return self._link.call(op, (self, other), {})

    def reflected(self, other):
        return self._link.call(op, (other, self), {})

    return forward, reflected


for _name, _op in [("add", operator.add), ("sub", operator.sub), ("mul", operator.mul), ("truediv", operator.truediv),
                   ("floordiv", operator.floordiv), ("mod", operator.mod), ("pow", operator.pow),
                   ("matmul", operator.matmul)]:
    _fwd, _refl = _binary(_op)
    setattr(Remote, f"__{_name}__", _fwd)
    setattr(Remote, f"__r{_name}__", _refl)
for _name, _op in [("lt", operator.lt), ("le", operator.le), ("gt", operator.gt), ("ge", operator.ge),
                   ("eq", operator.eq), ("ne", operator.ne)]:
    setattr(Remote, f"__{_name}__", _binary(_op)[0])
Remote.__neg__ = lambda self: self._link.call(operator.neg, (self,), {})
Remote.__pos__ = lambda self: self._link.call(operator.pos, (self,), {})
Remote.__abs__ = lambda self: self._link.call(operator.abs, (self,), {})
Remote.__hash__ = object.__hash__


class CheckerLink:
    """The checker's end: sends a call, decodes the reply, writes each argument's new state back."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.calls = 0
        self.last_moved = False  # whether the last call moved the learner's global torch generator

    def fetch(self, name: str) -> Any:
        """The learner's value of a notebook name: plain data, or a `Remote`."""
        send_message(self.sock, {"op": "get", "name": name})
        return self._reply(Codec(remote=self._remote))

    def _remote(self, id_: int, type_name: str) -> Remote:
        return Remote(self, id_, type_name)

    def call(self, fn: Any, args: tuple, kwargs: dict, keep: bool = False) -> Any:
        """fn(*args, **kwargs) in the learner's process: its result decoded (`keep`: a handle to it, whatever
        it is), its arguments' new state written back into the checker's own."""
        codec = Codec(remote=self._remote)
        flat = _mutables((args, kwargs))
        request = {"op": "call", "fn": codec.encode(fn), "args": codec.encode(list(args)),
                   "kwargs": codec.encode(dict(kwargs)), "keep": keep}
        self.calls += 1
        self.last_moved = False
        send_message(self.sock, request)
        reply = recv_message(self.sock)
        if type(reply) is not dict:
            raise LinkError("a reply that is not plain data")
        self.last_moved = reply.get("moved") is True
        after = reply.get("after")
        if type(after) is list and len(after) == len(flat):
            for own, state in zip(flat, after):
                _write_back(own, codec, state)
        codec.args = flat
        if "raised" in reply:
            raise codec.decode(reply["raised"])
        if "result" not in reply:
            raise LinkError("a reply without a result")
        return codec.decode(reply["result"])

    def _reply(self, codec: Codec) -> Any:
        reply = recv_message(self.sock)
        if type(reply) is not dict:
            raise LinkError("a reply that is not plain data")
        if "raised" in reply:
            raise codec.decode(reply["raised"])
        return codec.decode(reply.get("result"))

    def end(self) -> None:
        send_message(self.sock, {"op": "end"})


def _mutables(value: Any, found: list | None = None, depth: int = 0) -> list:
    """Every tensor and array in a call's arguments, depth first: both sides list them in the same order."""
    found = [] if found is None else found
    if depth > DEPTH_CAP:
        return found
    t = type(value)
    if t in (torch.Tensor, torch.nn.Parameter, np.ndarray):
        found.append(value)
    elif t in (tuple, list):
        for v in value:
            _mutables(v, found, depth + 1)
    elif t is dict:
        for v in value.values():
            _mutables(v, found, depth + 1)
    return found


def _write_back(own: Any, codec: Codec, state: Any) -> None:
    """An argument as learner code left it, into the checker's own object (values, requires_grad, grad)."""
    try:
        new = Codec(remote=codec.remote).decode(state)
    except LinkError:
        return
    if type(own) is np.ndarray:
        if type(new) is np.ndarray and new.shape == own.shape and new.dtype == own.dtype and own.flags.writeable:
            own[...] = new
        return
    if not isinstance(new, torch.Tensor):
        return
    with torch.no_grad():
        if new.shape == own.shape and new.dtype == own.dtype:
            if not torch.equal(own.detach(), new.detach()):
                own.detach().copy_(new.detach())
        else:
            own.data = new.detach().clone()
    if own.is_leaf:
        if own.requires_grad != new.requires_grad and (own.dtype.is_floating_point or own.dtype.is_complex):
            own.requires_grad_(new.requires_grad)
        own.grad = new.grad.detach().clone() if new.is_leaf and new.grad is not None else None


# --------------------------------------------------------------------------- the learner's side


class LearnerEnd:
    """Serves the checker's requests in the learner's process: names of the notebook, calls, handles."""

    def __init__(self, sock: socket.socket, namespace: dict) -> None:
        self.sock, self.namespace = sock, namespace
        self.objects: dict[int, Any] = {}
        # bound now, before any learner code runs: the generator's state is read with these
        self._rng_state, self._equal = torch.default_generator.get_state, torch.equal

    def _handle(self, obj: Any) -> dict:
        key = id(obj)
        self.objects[key] = obj
        return {"h": key, "type": type(obj).__name__[:100]}

    def _lookup(self, key: Any) -> Any:
        if type(key) is not int or key not in self.objects:
            raise LinkError("a handle this process does not hold")
        return self.objects[key]

    def _codec(self) -> Codec:
        codec = Codec(handles=self._handle)
        codec.handles_lookup = self._lookup
        return codec

    def serve(self, quiet) -> None:
        """Answer requests until the checker says the cell is done."""
        while True:
            try:
                request = recv_message(self.sock)
            except LinkError:
                return
            if type(request) is not dict or request.get("op") == "end":
                self.objects.clear()
                return
            send_message(self.sock, self.answer(request, quiet))

    def answer(self, request: dict, quiet) -> dict:
        codec = self._codec()
        try:
            if request.get("op") == "get":
                name = str(request.get("name"))
                if name not in self.namespace:
                    raise NameError(f"name {name!r} is not defined")
                return {"result": self._encode(codec, self.namespace[name])}
            fn = codec.decode(request["fn"])
            args = codec.decode(request["args"])
            kwargs = codec.decode(request["kwargs"])
        except Exception as exc:
            return {"raised": codec.encode(exc)}
        flat = _mutables((args, kwargs))
        before = self._rng_state()
        try:
            with quiet():
                result = fn(*args, **kwargs)
        except BaseException as exc:  # the learner's exception is data for the checker; an interrupt too
            return {"raised": codec.encode(exc), "after": self._after(flat), "moved": self._moved(before)}
        moved = self._moved(before)
        codec.args = flat
        try:
            encoded = self._handle(result) if request.get("keep") is True else self._encode(codec, result)
        except Exception as exc:
            return {"raised": codec.encode(exc), "after": self._after(flat), "moved": moved}
        return {"result": encoded, "after": self._after(flat), "moved": moved}

    def _moved(self, before) -> bool:
        return not self._equal(before, self._rng_state())

    def _encode(self, codec: Codec, value: Any) -> Any:
        return codec.encode(value)

    def _after(self, flat: list) -> list:
        codec = Codec(handles=self._handle)
        out = []
        for v in flat:
            try:
                out.append(codec.encode(v))
            except Exception:
                out.append(None)
        return out


def quiet_warnings():
    ctx = warnings.catch_warnings()

    class _Quiet:
        def __enter__(self):
            ctx.__enter__()
            warnings.simplefilter("ignore")

        def __exit__(self, *exc):
            return ctx.__exit__(*exc)

    return _Quiet()
