# Chapter 2, notebook 2.5, the capstone: a two-layer network trained with the learner's own Value engine.
import runpy
from pathlib import Path

#: A correct Value engine (value-engine's), which every answer below brings along as a learner would.
_VALUE = runpy.run_path(str(Path(__file__).with_name("value-engine.py")))["_BASE"]

#: The solution's loop, with slots for the variations below.
_LOOP = '''

def train_on_value(params, X, t, lr, steps):
    W1 = [list(row) for row in params["W1"]]
    b1, W2, b2 = list(params["b1"]), list(params["W2"]), params["b2"]
    losses = []
    for _ in range(steps):
        vW1 = [[Value(w) for w in row] for row in W1]
        vb1, vW2, vb2 = [Value(b) for b in b1], [Value(w) for w in W2], Value(b2)
        total = Value(0.0)
        for x, target in zip(X, t):
            hidden = [sum((w * xk for w, xk in zip(row, x)), b).@ACT@ for row, b in zip(vW1, vb1)]
            out = sum((w * hj for w, hj in zip(vW2, hidden)), vb2)
            total = total + (out + (-target)) ** 2
        loss = total * @SCALE@
        loss.backward()
        losses.append(@LOSS@)
        W1 = [[v.data @SIGN@ lr * v.grad for v in row] for row in vW1]
        b1 = [v.data @SIGN@ lr * v.grad for v in vb1]
        W2 = [v.data @SIGN@ lr * v.grad for v in vW2]
        b2 = @B2@
    return losses, {"W1": W1, "b1": b1, "W2": W2, "b2": @RET_B2@}
'''
_SLOTS = {"ACT": "tanh()", "SCALE": "(1.0 / len(X))", "LOSS": "loss.data", "SIGN": "-",
          "B2": "vb2.data - lr * vb2.grad", "RET_B2": "b2"}


def _answer(value=_VALUE, **changes):
    loop = _LOOP
    for slot, default in _SLOTS.items():
        loop = loop.replace(f"@{slot}@", changes.get(slot, default))
    return value + loop


# Parameters kept as Value objects from step to step: every step adds its gradients to the ones before.
_PERSISTENT = _VALUE + '''

def train_on_value(params, X, t, lr, steps):
    vW1 = [[Value(w) for w in row] for row in params["W1"]]
    vb1, vW2, vb2 = [Value(b) for b in params["b1"]], [Value(w) for w in params["W2"]], Value(params["b2"])
    losses = []
    for _ in range(steps):
        total = Value(0.0)
        for x, target in zip(X, t):
            hidden = [sum((w * xk for w, xk in zip(row, x)), b).tanh() for row, b in zip(vW1, vb1)]
            out = sum((w * hj for w, hj in zip(vW2, hidden)), vb2)
            total = total + (out + (-target)) ** 2
        loss = total * (1.0 / len(X))
        loss.backward()
        losses.append(loss.data)
        for v in [*[v for row in vW1 for v in row], *vb1, *vW2, vb2]:
            v.data -= lr * v.grad                      # never reset: v.grad keeps every earlier step's gradient
    return losses, {"W1": [[v.data for v in row] for row in vW1], "b1": [v.data for v in vb1],
                    "W2": [v.data for v in vW2], "b2": vb2.data}
'''

# The second layer updated first, and the first layer from a loss recomputed with the new second layer.
_SEQUENTIAL = _VALUE + '''

def _loss(W1, b1, W2, b2, X, t):
    vW1 = [[Value(w) for w in row] for row in W1]
    vb1, vW2, vb2 = [Value(b) for b in b1], [Value(w) for w in W2], Value(b2)
    total = Value(0.0)
    for x, target in zip(X, t):
        hidden = [sum((w * xk for w, xk in zip(row, x)), b).tanh() for row, b in zip(vW1, vb1)]
        out = sum((w * hj for w, hj in zip(vW2, hidden)), vb2)
        total = total + (out + (-target)) ** 2
    loss = total * (1.0 / len(X))
    loss.backward()
    return loss, vW1, vb1, vW2, vb2


def train_on_value(params, X, t, lr, steps):
    W1, b1, W2, b2 = [list(r) for r in params["W1"]], list(params["b1"]), list(params["W2"]), params["b2"]
    losses = []
    for _ in range(steps):
        loss, vW1, vb1, vW2, vb2 = _loss(W1, b1, W2, b2, X, t)
        losses.append(loss.data)
        W2 = [v.data - lr * v.grad for v in vW2]
        b2 = vb2.data - lr * vb2.grad
        _, vW1, vb1, _, _ = _loss(W1, b1, W2, b2, X, t)  # the second layer already moved: not this step's gradient
        W1 = [[v.data - lr * v.grad for v in row] for row in vW1]
        b1 = [v.data - lr * v.grad for v in vb1]
    return losses, {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
'''

# A Value whose tanh passes the gradient through unchanged (a missing local derivative).
_TANH_NO_DERIVATIVE = _answer(_VALUE.replace("self.grad += (1.0 - out.data ** 2) * out.grad", "self.grad += out.grad"))

WRONG = [
    _PERSISTENT,                                       # gradients of earlier steps left in .grad
    _SEQUENTIAL,                                       # the first layer updated from a later loss
    _TANH_NO_DERIVATIVE,                               # tanh's local derivative forgotten
    _answer(SCALE="1.0"),                              # the sum of the squared errors, not their mean
    _answer(SIGN="+", B2="vb2.data + lr * vb2.grad"),  # gradient ascent
    _answer(ACT="exp()"),                              # another activation
    _answer(B2="vb2.data"),                            # the output bias never moves
    _answer(RET_B2="[b2]"),                            # b2 returned as a list, not a float
    _answer(LOSS="loss"),                              # the loss as a Value, not a float
]
# the loss after each update, not before: one step late
WRONG.append(_VALUE + '''

def train_on_value(params, X, t, lr, steps):
    W1, b1, W2, b2 = [list(r) for r in params["W1"]], list(params["b1"]), list(params["W2"]), params["b2"]
    losses = []
    for _ in range(steps + 1):
        vW1 = [[Value(w) for w in row] for row in W1]
        vb1, vW2, vb2 = [Value(b) for b in b1], [Value(w) for w in W2], Value(b2)
        total = Value(0.0)
        for x, target in zip(X, t):
            hidden = [sum((w * xk for w, xk in zip(row, x)), b).tanh() for row, b in zip(vW1, vb1)]
            out = sum((w * hj for w, hj in zip(vW2, hidden)), vb2)
            total = total + (out + (-target)) ** 2
        loss = total * (1.0 / len(X))
        if _ > 0:
            losses.append(loss.data)                   # the loss after each update, not before
        if _ == steps:
            break
        loss.backward()
        W1 = [[v.data - lr * v.grad for v in row] for row in vW1]
        b1 = [v.data - lr * v.grad for v in vb1]
        W2 = [v.data - lr * v.grad for v in vW2]
        b2 = vb2.data - lr * vb2.grad
    return losses, {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
''')

RIGHT = [
    # PyTorch instead of the learner's engine: the checks see only numbers
    '''import torch


def train_on_value(params, X, t, lr, steps):
    f64 = torch.float64
    W1, b1, W2 = (torch.tensor(params[k], dtype=f64, requires_grad=True) for k in ("W1", "b1", "W2"))
    b2 = torch.tensor(params["b2"], dtype=f64, requires_grad=True)
    Xt, tt = torch.tensor(X, dtype=f64), torch.tensor(t, dtype=f64)
    losses = []
    for _ in range(steps):
        for p in (W1, b1, W2, b2):
            p.grad = None
        loss = ((torch.tanh(Xt @ W1.T + b1) @ W2 + b2 - tt) ** 2).mean()
        loss.backward()
        losses.append(float(loss))
        with torch.no_grad():
            for p in (W1, b1, W2, b2):
                p.sub_(lr * p.grad)
    return losses, {"W1": W1.tolist(), "b1": b1.tolist(), "W2": W2.tolist(), "b2": float(b2)}
''',
    # torch.func.grad on a function of a dict of parameters
    '''import torch
from torch.func import grad


def train_on_value(params, X, t, lr, steps):
    f64 = torch.float64
    p = {k: torch.tensor(v, dtype=f64) for k, v in params.items()}
    Xt, tt = torch.tensor(X, dtype=f64), torch.tensor(t, dtype=f64)

    def loss_fn(p):
        return ((torch.tanh(Xt @ p["W1"].T + p["b1"]) @ p["W2"] + p["b2"] - tt) ** 2).mean()

    losses = []
    for _ in range(steps):
        losses.append(loss_fn(p).item())
        g = grad(loss_fn)(p)
        p = {k: p[k] - lr * g[k] for k in p}
    return losses, {"W1": p["W1"].tolist(), "b1": p["b1"].tolist(), "W2": p["W2"].tolist(), "b2": p["b2"].item()}
''',
    # the learner's engine, with the loss as one sum per sample averaged by a division-free product, the
    # parameters zeroed and reused rather than rebuilt, and the arguments changed in place
    _VALUE + '''

def train_on_value(params, X, t, lr, steps):
    vW1 = [[Value(w) for w in row] for row in params["W1"]]
    vb1, vW2, vb2 = [Value(b) for b in params["b1"]], [Value(w) for w in params["W2"]], Value(params["b2"])
    every = [*[v for row in vW1 for v in row], *vb1, *vW2, vb2]
    losses = []
    for _ in range(steps):
        for v in every:
            v.grad = 0.0
        errors = []
        for x, target in zip(X, t):
            hidden = [(b + sum(w * xk for w, xk in zip(row, x))).tanh() for row, b in zip(vW1, vb1)]
            out = vb2 + sum(w * hj for w, hj in zip(vW2, hidden))
            errors.append((out + -target) * (out + -target))
        loss = sum(errors[1:], errors[0]) * (1.0 / len(errors))
        loss.backward()
        losses.append(loss.data)
        for v in every:
            v.data = v.data - lr * v.grad
    params["W1"].clear()
    return losses, {"W1": [[v.data for v in row] for row in vW1], "b1": [v.data for v in vb1],
                    "W2": [v.data for v in vW2], "b2": vb2.data}
''',
    # a tape-based engine of its own instead of parents and closures
    '''import math


class Value:
    tape = []

    def __init__(self, data, parents=()):
        self.data, self.grad, self._local = float(data), 0.0, parents   # parents: ((value, local derivative), ...)
        Value.tape.append(self)

    def _op(self, data, local):
        return Value(data, local)

    def __add__(self, o):
        o = o if isinstance(o, Value) else Value(o)
        return self._op(self.data + o.data, ((self, 1.0), (o, 1.0)))

    __radd__ = __add__

    def __mul__(self, o):
        o = o if isinstance(o, Value) else Value(o)
        return self._op(self.data * o.data, ((self, o.data), (o, self.data)))

    __rmul__ = __mul__

    def __pow__(self, k):
        return self._op(self.data ** k, ((self, k * self.data ** (k - 1)),))

    def exp(self):
        e = math.exp(self.data)
        return self._op(e, ((self, e),))

    def tanh(self):
        y = math.tanh(self.data)
        return self._op(y, ((self, 1.0 - y * y),))

    def backward(self):
        self.grad = 1.0
        for node in reversed(Value.tape[:Value.tape.index(self) + 1]):
            for parent, local in node._local:
                parent.grad += local * node.grad
        Value.tape = []


def train_on_value(params, X, t, lr, steps):
    W1, b1, W2, b2 = [list(r) for r in params["W1"]], list(params["b1"]), list(params["W2"]), params["b2"]
    losses = []
    for _ in range(steps):
        Value.tape = []
        vW1 = [[Value(w) for w in row] for row in W1]
        vb1, vW2, vb2 = [Value(b) for b in b1], [Value(w) for w in W2], Value(b2)
        total = Value(0.0)
        for x, target in zip(X, t):
            hidden = [sum((w * xk for w, xk in zip(row, x)), b).tanh() for row, b in zip(vW1, vb1)]
            total = total + (sum((w * hj for w, hj in zip(vW2, hidden)), vb2) + (-target)) ** 2
        loss = total * (1.0 / len(X))
        loss.backward()
        losses.append(loss.data)
        W1 = [[v.data - lr * v.grad for v in row] for row in vW1]
        b1, W2, b2 = [v.data - lr * v.grad for v in vb1], [v.data - lr * v.grad for v in vW2], vb2.data - lr * vb2.grad
    return losses, {"W1": W1, "b1": b1, "W2": W2, "b2": b2}
''',
]
