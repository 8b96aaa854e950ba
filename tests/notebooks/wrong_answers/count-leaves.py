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
    "def count_leaves(out):\n    seen, leaves, stack = set(), set(), [out.grad_fn]\n    while stack:\n        n = stack.pop()\n"
    "        if n is None or n in seen:\n            continue\n        seen.add(n)\n"
    "        if hasattr(n, 'variable'):\n            leaves.add(n)\n"
    "        stack.extend(f for f, _ in n.next_functions)\n    return float(len(leaves))",
]
RIGHT = [
    # recursion with a set of leaf tensors (by identity)
    "def count_leaves(out):\n    found = {}\n    def visit(fn):\n        if fn is None:\n            return\n"
    "        if type(fn).__name__ == 'AccumulateGrad':\n            found[id(fn.variable)] = True\n"
    "        for nxt, _ in fn.next_functions:\n            visit(nxt)\n    visit(out.grad_fn)\n    return len(found)",
]
