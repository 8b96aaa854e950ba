WRONG = [
    # drain off by one (counts the columns, not cols - 1)
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return math.ceil(k / rows) * math.ceil(n / cols) * (2 * rows + cols + m - 1)",
    # fill off by one (rows - 2)
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return math.ceil(k / rows) * math.ceil(n / cols) * (2 * rows + cols + m - 3)",
    # forgets the weight load
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return math.ceil(k / rows) * math.ceil(n / cols) * (rows + cols + m - 2)",
    # floor instead of ceiling for the tiles
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return max(1, k // rows) * max(1, n // cols) * (2 * rows + cols + m - 2)",
    # tiles K by the columns and N by the rows
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return math.ceil(k / cols) * math.ceil(n / rows) * (2 * rows + cols + m - 2)",
    # uses the matrix sizes instead of the array's for fill and drain
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return math.ceil(k / rows) * math.ceil(n / cols) * (rows + min(k, rows) + min(n, cols) + m - 2)",
    # a float
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return -(-k // rows) * -(-n // cols) * (2 * rows + cols + m - 2) * 1.0",
    # runs the simulator, which the task rules out: the product 10**8 x 10**8 cannot even be allocated
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    x = torch.zeros(m, k, dtype=torch.int8)\n"
    "    w = torch.zeros(k, n, dtype=torch.int8)\n"
    "    return systolic.systolic_matmul(x, w, rows, cols)[1]",
    # one tile's cycles, times the number of tiles counted once for K and N together
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return (math.ceil(k / rows) + math.ceil(n / cols) - 1) * (2 * rows + cols + m - 2)",
    # a NumPy integer
    "import numpy as np\n"
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    return np.int64(-(-k // rows) * -(-n // cols)) * (2 * rows + cols + m - 2)",
]

RIGHT = [
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    tiles = -(-k // rows) * -(-n // cols)\n"
    "    return tiles * (2 * rows + cols + m - 2)",
    # tile by tile, as the simulator runs them
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    total = 0\n"
    "    for k0 in range(0, k, rows):\n"
    "        for n0 in range(0, n, cols):\n"
    "            total += rows + (rows - 1) + m + (cols - 1)\n"
    "    return total",
    # NumPy and floats inside (exact at these sizes), an int out
    "import numpy as np\n"
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    tiles = np.ceil(k / rows) * np.ceil(n / cols)\n"
    "    return int(tiles * (2 * rows + cols + m - 2))",
    # load, then the stream's length from the last result's exit cycle
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    last_exit = (m - 1) + (rows - 1) + (cols - 1)\n"
    "    per_tile = rows + last_exit + 1\n"
    "    return math.ceil(k / rows) * math.ceil(n / cols) * per_tile",
]
