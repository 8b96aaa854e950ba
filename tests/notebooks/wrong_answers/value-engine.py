# Chapter 2, notebook 2.3, exercise 2: a scalar reverse-mode engine, checked against torch.autograd.
_BASE = '''import math


class Value:
    def __init__(self, data, parents=()):
        self.data = float(data)
        self.grad = 0.0
        self._parents = parents
        self._backward = lambda: None

    @staticmethod
    def _wrap(other):
        return other if isinstance(other, Value) else Value(other)

    def __add__(self, other):
        other = self._wrap(other)
        out = Value(self.data + other.data, (self, other))
        def backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = backward
        return out

    __radd__ = __add__

    def __mul__(self, other):
        other = self._wrap(other)
        out = Value(self.data * other.data, (self, other))
        def backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = backward
        return out

    __rmul__ = __mul__

    def __pow__(self, k):
        out = Value(self.data ** k, (self,))
        def backward():
            self.grad += k * self.data ** (k - 1) * out.grad
        out._backward = backward
        return out

    def exp(self):
        out = Value(math.exp(self.data), (self,))
        def backward():
            self.grad += out.data * out.grad
        out._backward = backward
        return out

    def tanh(self):
        out = Value(math.tanh(self.data), (self,))
        def backward():
            self.grad += (1.0 - out.data ** 2) * out.grad
        out._backward = backward
        return out

    def backward(self):
        order, seen = [], set()
        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for parent in node._parents:
                    visit(parent)
                order.append(node)
        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
'''

_TOPO = '''        order, seen = [], set()
        def visit(node):
            if id(node) not in seen:
                seen.add(id(node))
                for parent in node._parents:
                    visit(parent)
                order.append(node)
        visit(self)
        self.grad = 1.0
        for node in reversed(order):
            node._backward()
'''


def _replace(old: str, new: str) -> str:
    assert old in _BASE, old
    return _BASE.replace(old, new)


WRONG = [
    # no accumulation: a node used twice keeps only its last contribution
    _replace("            self.grad += out.grad\n            other.grad += out.grad",
             "            self.grad = out.grad\n            other.grad = out.grad")
    .replace("            self.grad += other.data * out.grad\n            other.grad += self.data * out.grad",
             "            self.grad = other.data * out.grad\n            other.grad = self.data * out.grad"),
    # breadth-first order: a node can pass its gradient on before all its consumers have sent theirs
    _replace(_TOPO, "        self.grad = 1.0\n        queue, seen = [self], {id(self)}\n        while queue:\n"
             "            node = queue.pop(0)\n            node._backward()\n            for p in node._parents:\n"
             "                if id(p) not in seen:\n                    seen.add(id(p))\n                    queue.append(p)\n"),
    # depth-first, each node's backward run as soon as it is reached (no topological order)
    _replace(_TOPO, "        self.grad = 1.0\n        def run(node):\n            node._backward()\n"
             "            for p in node._parents:\n                run(p)\n        run(self)\n"),
    # topological order, but run forwards (leaves first)
    _replace("        for node in reversed(order):", "        for node in order:"),
    # no visited set: a shared node is listed (and run) twice
    _replace("            if id(node) not in seen:\n                seen.add(id(node))\n",
             "            if True:\n"),
    # never seeds the output's gradient with 1
    _replace("        self.grad = 1.0\n        for node in reversed(order):", "        for node in reversed(order):"),
    # tanh' written as 1 - tanh instead of 1 - tanh**2
    _replace("(1.0 - out.data ** 2) * out.grad", "(1.0 - out.data) * out.grad"),
    # pow' written as k * x**k
    _replace("k * self.data ** (k - 1) * out.grad", "k * self.data ** k * out.grad"),
    # no __radd__ / __rmul__: 2 * x fails
    _replace("    __radd__ = __add__\n", "").replace("    __rmul__ = __mul__\n", ""),
    # exp' uses the input instead of the output
    _replace("            self.grad += out.data * out.grad", "            self.grad += self.data * out.grad"),
    # `=` for `+=` in one method only: a value used twice by that operation keeps one contribution
    _replace("            self.grad += out.data * out.grad", "            self.grad = out.data * out.grad"),
    _replace("            self.grad += (1.0 - out.data ** 2)", "            self.grad = (1.0 - out.data ** 2)"),
    _replace("            self.grad += k * self.data", "            self.grad = k * self.data"),
    _replace("            self.grad += other.data * out.grad", "            self.grad = other.data * out.grad"),
    _replace("            other.grad += self.data * out.grad", "            other.grad = self.data * out.grad"),
    _replace("            self.grad += out.grad\n            other.grad += out.grad",
             "            self.grad = out.grad\n            other.grad += out.grad"),
    _replace("            self.grad += out.grad\n            other.grad += out.grad",
             "            self.grad += out.grad\n            other.grad = out.grad"),
    # a visited set by value: a second node that holds the same number is never run
    _replace("            if id(node) not in seen:\n                seen.add(id(node))\n",
             "            if node.data not in seen:\n                seen.add(node.data)\n"),
    # a visited list compared with ==, with an __eq__ that compares values
    _replace("    __radd__ = __add__\n", "    __radd__ = __add__\n\n    def __eq__(self, other):\n"
             "        return isinstance(other, Value) and self.data == other.data\n\n    __hash__ = object.__hash__\n")
    .replace("            if id(node) not in seen:\n                seen.add(id(node))\n",
             "            if node not in seen:\n                seen.append(node)\n").replace(
        "        order, seen = [], set()", "        order, seen = [], []"),
    # grad starts as the int 0: a value out does not depend on keeps an int
    _replace("        self.grad = 0.0\n", "        self.grad = 0\n"),
    # data kept as given: Value(3).data is the int 3
    _replace("        self.data = float(data)\n", "        self.data = data\n"),
    # out.grad seeded with the int 1
    _replace("        self.grad = 1.0\n        for node in reversed(order):",
             "        self.grad = 1\n        for node in reversed(order):"),
]
RIGHT = [
    # an explicit stack-based topological sort (Kahn's algorithm on consumer counts)
    _replace(_TOPO, "        users = {}\n        stack, seen = [self], {id(self)}\n        while stack:\n"
             "            n = stack.pop()\n            for p in n._parents:\n                users[id(p)] = users.get(id(p), 0) + 1\n"
             "                if id(p) not in seen:\n                    seen.add(id(p))\n                    stack.append(p)\n"
             "        self.grad = 1.0\n        ready = [self]\n        while ready:\n            n = ready.pop()\n"
             "            n._backward()\n            for p in n._parents:\n                users[id(p)] -= 1\n"
             "                if users[id(p)] == 0:\n                    ready.append(p)\n"),
    # every Value numbered at creation: decreasing numbers are a reverse topological order
    _replace("        self._backward = lambda: None\n", "        self._backward = lambda: None\n"
             "        Value._made = getattr(Value, '_made', 0) + 1\n        self._n = Value._made\n")
    .replace(_TOPO, "        nodes, stack = {id(self): self}, [self]\n        while stack:\n            n = stack.pop()\n"
             "            for p in n._parents:\n                if id(p) not in nodes:\n"
             "                    nodes[id(p)] = p\n                    stack.append(p)\n"
             "        self.grad = 1.0\n        for n in sorted(nodes.values(), key=lambda n: n._n, reverse=True):\n"
             "            n._backward()\n"),
    # an iterative depth-first post-order with an explicit stack
    _replace(_TOPO, "        order, seen, stack = [], set(), [(self, False)]\n        while stack:\n"
             "            node, done = stack.pop()\n            if done:\n                order.append(node)\n"
             "                continue\n            if id(node) in seen:\n                continue\n"
             "            seen.add(id(node))\n            stack.append((node, True))\n"
             "            stack.extend((p, False) for p in node._parents if id(p) not in seen)\n"
             "        self.grad = 1.0\n        for node in reversed(order):\n            node._backward()\n"),
    # numbers wrapped explicitly in __radd__/__rmul__, tanh' from the input
    _replace("    __radd__ = __add__\n", "    def __radd__(self, other):\n        return Value(other) + self\n")
    .replace("    __rmul__ = __mul__\n", "    def __rmul__(self, other):\n        return Value(other) * self\n")
    .replace("(1.0 - out.data ** 2) * out.grad", "(1.0 / math.cosh(self.data) ** 2) * out.grad"),
]

