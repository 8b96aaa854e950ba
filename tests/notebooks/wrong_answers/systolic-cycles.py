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
]

RIGHT = [
    "def systolic_cycles(m, k, n, rows, cols):\n"
    "    tiles = -(-k // rows) * -(-n // cols)\n"
    "    return tiles * (2 * rows + cols + m - 2)",
]
