"""An object of the learner's process as the checker sees it: every use is a plain-data request."""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from torchcourse.link.checker_end import CheckerLink


class Remote:
    """An object of the learner's process, seen from the checker: every use is a request over the link."""

    __slots__ = ("_link", "_id", "_type")

    def __init__(self, link: CheckerLink, id_: int, type_name: str = "") -> None:
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


