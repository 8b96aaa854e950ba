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
]

RIGHT = [
    "def peak_ops(rows, cols, clock_hz):\n    macs = rows * cols\n    return macs * clock_hz * 2",
]
