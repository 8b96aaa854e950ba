_ADD = ("def add_intensity(numel, dtype):\n"
        "    return numel / (dtype.itemsize * 3 * numel)\n")
_MATMUL = ("def matmul_intensity(m, k, n, dtype):\n"
           "    return 2 * m * k * n / (dtype.itemsize * (m * k + k * n + m * n))\n")

WRONG = [
    # counts multiply-accumulates, not operations (forgets the factor 2)
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return m * k * n / (dtype.itemsize * (m * k + k * n + m * n))\n" + _ADD,
    # forgets to count the output written back
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return 2 * m * k * n / (dtype.itemsize * (m * k + k * n))\n" + _ADD,
    # bits instead of bytes
    "def matmul_intensity(m, k, n, dtype):\n"
    "    bits = torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits\n"
    "    return 2 * m * k * n / (bits * (m * k + k * n + m * n))\n" + _ADD,
    # assumes 4 bytes per element whatever the dtype
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return 2 * m * k * n / (4 * (m * k + k * n + m * n))\n"
    "def add_intensity(numel, dtype):\n"
    "    return numel / (4 * 3 * numel)\n",
    # add: counts only the two inputs
    _MATMUL + "def add_intensity(numel, dtype):\n"
    "    return numel / (dtype.itemsize * 2 * numel)\n",
    # integer division: an int, and wrong
    _MATMUL + "def add_intensity(numel, dtype):\n"
    "    return numel // (dtype.itemsize * 3 * numel)\n",
    # returns a tensor
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return torch.tensor(2 * m * k * n / (dtype.itemsize * (m * k + k * n + m * n)))\n" + _ADD,
    # returns a NumPy scalar, not a Python float
    "import numpy as np\n"
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return np.float64(2 * m * k * n) / (dtype.itemsize * (m * k + k * n + m * n))\n" + _ADD,
    # counts the bytes of a square matmul of the first size only
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return 2 * m * k * n / (dtype.itemsize * 3 * m * m)\n" + _ADD,
]

RIGHT = [
    "def matmul_intensity(m, k, n, dtype):\n"
    "    flops = 2.0 * m * k * n\n"
    "    moved = (m * k + k * n + m * n) * torch.empty((), dtype=dtype).element_size()\n"
    "    return flops / moved\n"
    "def add_intensity(numel, dtype):\n"
    "    return 1 / (3 * dtype.itemsize)\n",
    # float32 arithmetic inside, a Python float out
    "def matmul_intensity(m, k, n, dtype):\n"
    "    ops = torch.tensor(2.0 * m * k * n, dtype=torch.float32)\n"
    "    moved = torch.tensor(float(m * k + k * n + m * n), dtype=torch.float32) * dtype.itemsize\n"
    "    return float(ops / moved)\n"
    "def add_intensity(numel, dtype):\n"
    "    return float(torch.tensor(numel, dtype=torch.float32) / (3 * numel * dtype.itemsize))\n",
    # NumPy inside, converted back to a Python float
    "import numpy as np\n"
    "def matmul_intensity(m, k, n, dtype):\n"
    "    sizes = np.array([m * k, k * n, m * n], dtype=np.float64)\n"
    "    return float(2 * m * k * n / (sizes.sum() * dtype.itemsize))\n"
    "def add_intensity(numel, dtype):\n"
    "    return float(np.float64(numel) / (3 * numel * dtype.itemsize))\n",
    # bytes from the bit width
    "def _bytes(dtype):\n"
    "    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)\n"
    "    return info.bits // 8\n"
    "def matmul_intensity(m, k, n, dtype):\n"
    "    return (2 * m * k * n) / (_bytes(dtype) * m * k + _bytes(dtype) * k * n + _bytes(dtype) * m * n)\n"
    "def add_intensity(numel, dtype):\n"
    "    ops, moved = numel, 3 * numel * _bytes(dtype)\n"
    "    return ops / moved\n",
]
