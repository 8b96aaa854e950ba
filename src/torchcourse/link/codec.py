"""Values as plain data and back: the one encoding both ends of the link use."""

from __future__ import annotations

import base64
import builtins
import functools
import importlib
import marshal
import math
import types
from typing import Any

import numpy as np
import torch

from torchcourse.link.remote import Remote
from torchcourse.link.wire import (
    _BUILTIN_NAMES,
    _LIBRARIES,
    DEPTH_CAP,
    ELEMENTS_CAP,
    LinkError,
    NotSendable,
    _all_names,
    _dtype,
    _exception,
    _flat_len,
    _float,
    _library_ref,
    _list,
    _numpy_dtype,
    _resolve,
    _span,
    _storage_span,
    _tensor_bytes,
    detach,
    numel,
    storage_nbytes,
    storage_offset,
    storage_ptr,
    stride,
    untyped_storage,
)

# What the checker accepts from the learner's process: values, exceptions, handles and the names of library
# objects it has loaded itself; never a module to import or code to run.
_DATA_KINDS = frozenset({"f", "c", "t", "l", "d", "size", "dtype", "device", "slice", "ellipsis", "tensor", "nd",
                         "npscalar", "exc", "h", "ref"})


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
        if numel(t) == 0:
            return None
        ptr = storage_ptr(untyped_storage(t))
        for k, arg in enumerate(self.args):
            if type(arg) in (torch.Tensor, torch.nn.Parameter) and storage_ptr(untyped_storage(arg)) == ptr \
                    and arg.dtype == t.dtype:
                before = arg._version
                torch.autograd.graph.increment_version(t)
                same_counter = arg._version != before
                return {"arg": k, "offset": storage_offset(t), "version": same_counter}
            if type(arg) is np.ndarray and arg.size and arg.dtype == _numpy_dtype(t.dtype):
                base = arg.__array_interface__["data"][0]
                if ptr == base:
                    return {"arg": k, "offset": storage_offset(t), "version": False}
        return None

    def _encode_tensor(self, t: torch.Tensor) -> dict:
        if t.layout != torch.strided or t.is_quantized or t.device.type != "cpu":
            raise NotSendable("only dense CPU tensors can be sent")
        out: dict[str, Any] = {"dtype": str(t.dtype), "shape": list(t.shape), "stride": list(stride(t)),
                               "rg": t.requires_grad, "leaf": t.is_leaf}
        if type(t) is torch.nn.Parameter:
            out["param"] = True
        alias = self._alias(t)
        if alias is not None:
            out["alias"] = alias
        else:
            out["data"], out["span"] = _tensor_bytes(t)
            out["offset"] = storage_offset(t) if storage_offset(t) <= ELEMENTS_CAP else 0
        if t.is_leaf and t.grad is not None:
            out["grad"] = self._encode_tensor(detach(t.grad))
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
            if type(arg) in (torch.Tensor, torch.nn.Parameter) and numel(arg) and \
                    _numpy_dtype(arg.dtype) == a.dtype:
                base = storage_ptr(untyped_storage(arg))
                if base <= start < base + storage_nbytes(untyped_storage(arg)):
                    return {"arg": k, "offset": (start - base) // a.itemsize}
            if type(arg) is np.ndarray and arg.size and arg.dtype == a.dtype:
                base = arg.__array_interface__["data"][0]
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
        if self.remote is not None and kind not in _DATA_KINDS:
            raise LinkError(f"a value of kind {kind!r} from learner code")  # only data comes back
        if kind == "f":
            if body not in ("nan", "inf", "-inf"):
                raise LinkError(f"not a float: {body!r}")
            return float(body)
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
            dtype = np.dtype(str(body))
            raw = base64.b64decode(v.get("data", ""))
            if dtype.kind not in "biufc" or len(raw) != dtype.itemsize:
                raise LinkError("a NumPy scalar that is not a number")
            return np.frombuffer(raw, dtype=dtype)[0]
        if kind == "exc":
            return _exception(body)
        if kind == "h":
            if self.remote is None:
                return self.handles_lookup(body)
            return self.remote(int(body), v.get("type", ""))
        if kind == "ref":  # a library's function or class (the checker takes its own copy)
            return _resolve(body, loaded_only=self.remote is not None)
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
        if len(shape) != len(stride) or any(n < 0 for n in shape) or any(s < 0 for s in stride) \
                or math.prod(shape) > ELEMENTS_CAP:
            raise LinkError("a tensor with an impossible shape, or too many elements")
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
            if len(raw) != span * dtype.itemsize:
                raise LinkError("a tensor whose data does not match its shape")
            if offset == 0 and span:
                store = torch.frombuffer(bytearray(raw), dtype=dtype).clone()  # a storage that can grow (resize_)
            else:
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


