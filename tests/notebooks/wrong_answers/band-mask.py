WRONG = [
    # strictly inside the band: off by one
    "def band_mask(n, k):\n    i = torch.arange(n)\n    return (i[:, None] - i).abs() < k",
    # the identity, whatever k is
    "def band_mask(n, k):\n    return torch.eye(n, dtype=torch.bool)",
    # numbers instead of booleans
    "def band_mask(n, k):\n    i = torch.arange(n)\n    return ((i[:, None] - i).abs() <= k).float()",
    # no abs: every element below the diagonal counts
    "def band_mask(n, k):\n    i = torch.arange(n)\n    return (i[None, :] - i[:, None]) <= k",
    # only the upper half of the band
    "def band_mask(n, k):\n    i = torch.arange(n)\n    d = i[None, :] - i[:, None]\n    return (d >= 0) & (d <= k)",
]
RIGHT = [
    "def band_mask(n, k):\n    return torch.ones(n, n, dtype=torch.bool).triu(-k).tril(k)",
    "def band_mask(n, k):\n    i = torch.arange(n).unsqueeze(1)\n    j = torch.arange(n).unsqueeze(0)\n    return (i - j <= k) & (j - i <= k)",
    "def band_mask(n, k):\n"
    "    out = torch.zeros(n, n, dtype=torch.bool)\n"
    "    for i in range(n):\n"
    "        for j in range(n):\n"
    "            out[i, j] = abs(i - j) <= k\n"
    "    return out",
    # NumPy's outer difference
    "import numpy as np\n"
    "def band_mask(n, k):\n"
    "    return torch.from_numpy(np.abs(np.subtract.outer(np.arange(n), np.arange(n))) <= k)",
    # the band built transposed: the same symmetric mask with other strides
    "def band_mask(n, k):\n"
    "    i = torch.arange(n)\n"
    "    return ((i[:, None] - i).abs() <= k).T",
    # vmap over rows
    "def band_mask(n, k):\n"
    "    i = torch.arange(n)\n"
    "    return torch.vmap(lambda r: (r - i).abs() <= k)(i) if n else torch.zeros(0, 0, dtype=torch.bool)",
]
