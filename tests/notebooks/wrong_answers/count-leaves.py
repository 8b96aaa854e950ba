# Chapter 2, notebook 2.1, exercise 2: distinct leaves reachable from out.grad_fn.
_WALK = (
    "def count_leaves(out):\n"
    "    count, stack = 0, [out.grad_fn]\n"
    "    while stack:\n"
    "        node = stack.pop()\n"
    "        if node is None:\n"
    "            {none}\n"
    "        if hasattr(node, 'variable'):\n"
    "            count += 1\n"
    "        stack.extend(fn for fn, _ in node.next_functions)\n"
    "    return count\n"
)
# A walk with a visited set of nodes; {leaf} decides what is collected for a leaf node n, {result} the answer.
_SEEN = (
    "def count_leaves(out):\n"
    "    seen, leaves, stack = set(), {empty}, [out.grad_fn]\n"
    "    while stack:\n"
    "        n = stack.pop()\n"
    "        if n is None or n in seen:\n"
    "            continue\n"
    "        seen.add(n)\n"
    "        if hasattr(n, 'variable'){cond}:\n"
    "            {leaf}\n"
    "        stack.extend(f for f, _ in n.next_functions)\n"
    "    return {result}\n"
)
WRONG = [
    # no de-duplication: a leaf used twice counts twice
    _WALK.format(none="continue"),
    # only the output's direct inputs
    "def count_leaves(out):\n    return sum(1 for fn, _ in out.grad_fn.next_functions if fn is not None)",
    # counts every node of the graph
    "def count_leaves(out):\n    seen, stack = set(), [out.grad_fn]\n    while stack:\n        n = stack.pop()\n"
    "        if n is None or n in seen:\n            continue\n        seen.add(n)\n"
    "        stack.extend(f for f, _ in n.next_functions)\n    return len(seen)",
    # counts the None entries (inputs that need no gradient) as leaves too
    "def count_leaves(out):\n    seen, count, stack = set(), 0, [out.grad_fn]\n    while stack:\n        n = stack.pop()\n"
    "        if n is None:\n            count += 1\n            continue\n        if n in seen:\n            continue\n"
    "        seen.add(n)\n        if hasattr(n, 'variable'):\n            count += 1\n"
    "        stack.extend(f for f, _ in n.next_functions)\n    return count",
    # the right number, as a float
    _SEEN.format(empty="set()", cond="", leaf="leaves.add(n)", result="float(len(leaves))"),
    # de-duplicates by value: two different leaves that hold equal numbers count once
    _SEEN.format(empty="set()", cond="", leaf="leaves.add(tuple(n.variable.detach().reshape(-1).tolist()))",
                 result="len(leaves)"),
    # by value through float(): the same mistake for scalar leaves (and an error for larger ones)
    _SEEN.format(empty="set()", cond="", leaf="leaves.add(float(n.variable))", result="len(leaves)"),
    # a list with `in`: tensors compare by value there (and raise for more than one element)
    _SEEN.format(empty="[]", cond=" and n.variable not in leaves", leaf="leaves.append(n.variable)",
                 result="len(leaves)"),
]
RIGHT = [
    # recursion with a set of leaf tensors (by identity)
    "def count_leaves(out):\n    found = {}\n    def visit(fn):\n        if fn is None:\n            return\n"
    "        if type(fn).__name__ == 'AccumulateGrad':\n            found[id(fn.variable)] = True\n"
    "        for nxt, _ in fn.next_functions:\n            visit(nxt)\n    visit(out.grad_fn)\n    return len(found)",
    # the solution's walk: a set of AccumulateGrad nodes
    _SEEN.format(empty="set()", cond="", leaf="leaves.add(n)", result="len(leaves)"),
    # a set of the leaf tensors themselves (tensors hash by identity)
    _SEEN.format(empty="set()", cond="", leaf="leaves.add(n.variable)", result="len(leaves)"),
    # breadth first, a list compared by identity
    "from collections import deque\ndef count_leaves(out):\n    leaves, seen, queue = [], set(), deque([out.grad_fn])\n"
    "    while queue:\n        fn = queue.popleft()\n        if fn is None or fn in seen:\n            continue\n"
    "        seen.add(fn)\n        v = getattr(fn, 'variable', None)\n"
    "        if v is not None and not any(v is u for u in leaves):\n            leaves.append(v)\n"
    "        queue.extend(nxt for nxt, _ in fn.next_functions)\n    return len(leaves)",
    # no visited set of nodes: re-walks shared parts, but collects each AccumulateGrad node once
    "def count_leaves(out):\n    nodes, stack = set(), [out.grad_fn]\n    while stack:\n        fn = stack.pop()\n"
    "        if fn is None:\n            continue\n        if hasattr(fn, 'variable'):\n            nodes.add(fn)\n"
    "        stack.extend(nxt for nxt, _ in fn.next_functions)\n    return len(nodes)",
]
FAILING_VARIANTS = {
    "inputs-copied": "a copy of out has no graph: the leaves are found only through the caller's out.grad_fn",
}
