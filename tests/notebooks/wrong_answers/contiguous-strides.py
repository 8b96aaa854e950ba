WRONG = [
    # column-major (Fortran) order: the first stride is 1
    "def contiguous_strides(shape):\n"
    "    strides, step = [], 1\n"
    "    for size in shape:\n"
    "        strides.append(step)\n"
    "        step *= max(size, 1)\n"
    "    return tuple(strides)",
    # off by one: each stride includes its own dimension's size
    "import math\n"
    "def contiguous_strides(shape):\n"
    "    return tuple(math.prod(shape[i:]) for i in range(len(shape)))",
    # the row-major products, but a size 0 multiplied in makes strides 0
    "import math\n"
    "def contiguous_strides(shape):\n"
    "    return tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))",
    # strides computed right, returned in reverse order
    "def contiguous_strides(shape):\n"
    "    strides, step = [], 1\n"
    "    for size in reversed(shape):\n"
    "        strides.append(step)\n"
    "        step *= max(size, 1)\n"
    "    return tuple(strides)",
    # a list, not a tuple
    "def contiguous_strides(shape):\n"
    "    strides, step = [], 1\n"
    "    for size in reversed(shape):\n"
    "        strides.append(step)\n"
    "        step *= max(size, 1)\n"
    "    return list(reversed(strides))",
    # strides in bytes of float32, as NumPy counts them
    "def contiguous_strides(shape):\n"
    "    strides, step = [], 4\n"
    "    for size in reversed(shape):\n"
    "        strides.append(step)\n"
    "        step *= max(size, 1)\n"
    "    return tuple(reversed(strides))",
    # asks PyTorch: fails for shapes too large for any tensor, which the task says the checks include
    "def contiguous_strides(shape):\n"
    "    return tuple(torch.empty(shape).stride())",
    # the same on the meta device, which allocates nothing but still refuses such shapes
    "def contiguous_strides(shape):\n"
    "    return tuple(torch.empty(shape, device='meta').stride())",
    # floats: true division on the way
    "def contiguous_strides(shape):\n"
    "    total, out = 1, []\n"
    "    for size in shape:\n"
    "        total *= max(size, 1)\n"
    "    for size in shape:\n"
    "        total = total / max(size, 1)\n"
    "        out.append(total)\n"
    "    return tuple(out)",
]

RIGHT = [
    "import math\n"
    "def contiguous_strides(shape):\n"
    "    return tuple(math.prod(max(s, 1) for s in shape[i + 1:]) for i in range(len(shape)))",
    # built from the left, dividing a running product
    "import math\n"
    "def contiguous_strides(shape):\n"
    "    total = math.prod(max(s, 1) for s in shape)\n"
    "    out = []\n"
    "    for s in shape:\n"
    "        total //= max(s, 1)\n"
    "        out.append(total)\n"
    "    return tuple(out)",
    # itertools.accumulate over the reversed sizes
    "import itertools, operator\n"
    "def contiguous_strides(shape):\n"
    "    sizes = [max(s, 1) for s in reversed(shape[1:])]\n"
    "    return tuple(reversed(list(itertools.accumulate(sizes, operator.mul, initial=1)))) if shape else ()",
    # recursion
    "def contiguous_strides(shape):\n"
    "    if not shape:\n"
    "        return ()\n"
    "    rest = contiguous_strides(shape[1:])\n"
    "    return ((rest[0] * max(shape[1], 1),) if rest else (1,)) + rest",
]
