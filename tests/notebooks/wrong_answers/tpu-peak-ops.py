WRONG = [
    # MACs per second, not operations
    "def peak_ops(rows, cols, clock_hz):\n    return rows * cols * clock_hz",
    # rows + cols PEs
    "def peak_ops(rows, cols, clock_hz):\n    return 2 * (rows + cols) * clock_hz",
    # a square array assumed
    "def peak_ops(rows, cols, clock_hz):\n    return 2 * rows * rows * clock_hz",
    # a float (e.g. from 2e0 or a division)
    "def peak_ops(rows, cols, clock_hz):\n    return 2.0 * rows * cols * clock_hz",
    # TOPS instead of operations per second
    "def peak_ops(rows, cols, clock_hz):\n    return 2 * rows * cols * clock_hz / 1e12",
    # a NumPy integer, not a Python int
    "import numpy as np\n"
    "def peak_ops(rows, cols, clock_hz):\n    return np.int64(2) * rows * cols * clock_hz",
    # a tensor
    "def peak_ops(rows, cols, clock_hz):\n    return torch.tensor(2 * rows * cols * clock_hz)",
]

RIGHT = [
    "def peak_ops(rows, cols, clock_hz):\n    macs = rows * cols\n    return macs * clock_hz * 2",
    "def peak_ops(rows, cols, clock_hz):\n    return math.prod([2, rows, cols, clock_hz])",
    # NumPy inside, an int out
    "import numpy as np\n"
    "def peak_ops(rows, cols, clock_hz):\n    return int(np.int64(2) * rows * cols * clock_hz)",
    # float inside (exact below 2**53), an int out
    "def peak_ops(rows, cols, clock_hz):\n    return int(2.0 * rows * cols * clock_hz)",
]
