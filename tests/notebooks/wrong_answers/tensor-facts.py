WRONG = [
    # len() is the size of the first axis, not the rank (and fails on a scalar)
    "def tensor_facts(t):\n    return len(t.shape), tuple(t.shape), len(t)",
    # counts the axes instead of the elements
    "def tensor_facts(t):\n    return t.ndim, tuple(t.shape), t.ndim",
    # sums the sizes instead of multiplying them
    "def tensor_facts(t):\n    return t.ndim, tuple(t.shape), sum(t.shape)",
    # the shape as a list: the task asks for a tuple
    "def tensor_facts(t):\n    return t.ndim, list(t.shape), t.numel()",
    # the count as a float
    "def tensor_facts(t):\n    return t.ndim, tuple(t.shape), float(t.numel())",
    # hard-codes the visible cases
    "def tensor_facts(t):\n    return (0, (), 1) if t.ndim == 0 else (2, (2, 3), 6)",
]
RIGHT = [
    # a torch.Size is a tuple
    "def tensor_facts(t):\n    return t.ndim, t.shape, t.numel()",
    "def tensor_facts(t):\n    return t.dim(), tuple(t.size()), t.numel()",
    "import math\ndef tensor_facts(t):\n    return len(t.shape), tuple(int(s) for s in t.shape), math.prod(t.shape)",
    # NumPy's view of the shape, converted back to Python ints
    "def tensor_facts(t):\n"
    "    a = t.numpy()\n"
    "    return int(a.ndim), tuple(int(s) for s in a.shape), int(a.size)",
]
