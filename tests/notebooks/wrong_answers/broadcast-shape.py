WRONG = [
    # left-aligned: pads the shorter shape on the right instead of the left
    "def broadcast_shape(a, b):\n"
    "    n = max(len(a), len(b))\n"
    "    a, b = tuple(a) + (1,) * (n - len(a)), tuple(b) + (1,) * (n - len(b))\n"
    "    out = []\n"
    "    for i, (x, y) in enumerate(zip(a, b)):\n"
    "        if x != y and 1 not in (x, y):\n"
    "            raise ValueError(f'dimension {i - n} has sizes {x} and {y}')\n"
    "        out.append(y if x == 1 else x)\n"
    "    return tuple(out)",
    # the larger size in each dimension, with no compatibility check at all
    "import itertools\n"
    "def broadcast_shape(a, b):\n"
    "    pairs = itertools.zip_longest(reversed(a), reversed(b), fillvalue=1)\n"
    "    return tuple(reversed([max(x, y) for x, y in pairs]))",
    # the larger size, with the check: wrong when a size 0 meets a size 1
    "import itertools\n"
    "def broadcast_shape(a, b):\n"
    "    out = []\n"
    "    for k, (x, y) in enumerate(itertools.zip_longest(reversed(a), reversed(b), fillvalue=1), start=1):\n"
    "        if x != y and 1 not in (x, y):\n"
    "            raise ValueError(f'dimension {-k} has sizes {x} and {y}')\n"
    "        out.append(max(x, y))\n"
    "    return tuple(reversed(out))",
    # zip stops at the shorter shape: the missing leading dimensions are lost
    "def broadcast_shape(a, b):\n"
    "    out = []\n"
    "    for k, (x, y) in enumerate(zip(reversed(a), reversed(b)), start=1):\n"
    "        if x != y and 1 not in (x, y):\n"
    "            raise ValueError(f'dimension {-k} has sizes {x} and {y}')\n"
    "        out.append(y if x == 1 else x)\n"
    "    return tuple(reversed(out))",
    # numbers the failing dimension from the left of the result, as PyTorch's add error does
    "def broadcast_shape(a, b):\n"
    "    n = max(len(a), len(b))\n"
    "    out = []\n"
    "    for k in range(1, n + 1):\n"
    "        x = a[-k] if k <= len(a) else 1\n"
    "        y = b[-k] if k <= len(b) else 1\n"
    "        if x != y and 1 not in (x, y):\n"
    "            raise ValueError(f'dimension {n - k} has sizes {x} and {y}')\n"
    "        out.append(y if x == 1 else x)\n"
    "    return tuple(reversed(out))",
    # scans from the left, so names the leftmost failing dimension
    "def broadcast_shape(a, b):\n"
    "    n = max(len(a), len(b))\n"
    "    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)\n"
    "    out = []\n"
    "    for i, (x, y) in enumerate(zip(a, b)):\n"
    "        if x != y and 1 not in (x, y):\n"
    "            raise ValueError(f'dimension {i - n} has sizes {x} and {y}')\n"
    "        out.append(y if x == 1 else x)\n"
    "    return tuple(out)",
    # PyTorch's RuntimeError passed through, not a ValueError
    "def broadcast_shape(a, b):\n"
    "    return tuple(torch.broadcast_shapes(a, b))",
    # a list, not a tuple
    "def broadcast_shape(a, b):\n"
    "    n = max(len(a), len(b))\n"
    "    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)\n"
    "    out = []\n"
    "    for k in range(n - 1, -1, -1):\n"
    "        if a[k] != b[k] and 1 not in (a[k], b[k]):\n"
    "            raise ValueError(f'dimension {k - n} has sizes {a[k]} and {b[k]}')\n"
    "    return [b[i] if a[i] == 1 else a[i] for i in range(n)]",
]
RIGHT = [
    # checks the rule itself (naming the dimension) and lets PyTorch compute the shape
    "import itertools\n"
    "def broadcast_shape(a, b):\n"
    "    for k, (x, y) in enumerate(itertools.zip_longest(reversed(a), reversed(b), fillvalue=1), start=1):\n"
    "        if x != y and 1 not in (x, y):\n"
    "            raise ValueError(f'dimension {-k} has sizes {x} and {y}')\n"
    "    return tuple(torch.broadcast_shapes(a, b))",
    # padding on the left, then one pass from the right
    "def broadcast_shape(a, b):\n"
    "    n = max(len(a), len(b))\n"
    "    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)\n"
    "    for k in range(n - 1, -1, -1):\n"
    "        if a[k] != b[k] and 1 not in (a[k], b[k]):\n"
    "            raise ValueError(f'shapes do not broadcast at dimension {k - n}: {a[k]} vs {b[k]}')\n"
    "    return tuple(b[i] if a[i] == 1 else a[i] for i in range(n))",
    # zip_longest from the right
    "import itertools\n"
    "def broadcast_shape(a, b):\n"
    "    out = []\n"
    "    for k, (x, y) in enumerate(itertools.zip_longest(reversed(a), reversed(b), fillvalue=1), start=1):\n"
    "        if x == 1:\n"
    "            out.append(y)\n"
    "        elif y == 1 or x == y:\n"
    "            out.append(x)\n"
    "        else:\n"
    "            raise ValueError(f'dimension -{k}: {x} and {y} differ and neither is 1')\n"
    "    return tuple(reversed(out))",
    # NumPy computes the shape; the failing dimension found by a scan from the right
    "import numpy as np\n"
    "def broadcast_shape(a, b):\n"
    "    n = max(len(a), len(b))\n"
    "    for k in range(1, n + 1):\n"
    "        x = a[-k] if k <= len(a) else 1\n"
    "        y = b[-k] if k <= len(b) else 1\n"
    "        if x != y and x != 1 and y != 1:\n"
    "            raise ValueError(f'dimension -{k}')\n"
    "    return tuple(int(s) for s in np.broadcast_shapes(a, b))",
    # PyTorch's error caught and replaced
    "def broadcast_shape(a, b):\n"
    "    try:\n"
    "        return tuple(torch.broadcast_shapes(a, b))\n"
    "    except RuntimeError:\n"
    "        k = 1\n"
    "        while True:\n"
    "            x = a[-k] if k <= len(a) else 1\n"
    "            y = b[-k] if k <= len(b) else 1\n"
    "            if x != y and 1 not in (x, y):\n"
    "                raise ValueError(f'cannot broadcast: dimension -{k}') from None\n"
    "            k += 1",
]
