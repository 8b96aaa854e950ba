_RIGHT = ("def dataflow_costs(dataflow, m, k, n, rows, cols):\n"
          "    ceil_div = lambda a, b: -(-a // b)\n"
          "    if dataflow == 'ws':\n"
          "        return ceil_div(k, rows) * ceil_div(n, cols) * (2 * rows + cols + m - 2), m * k * ceil_div(n, cols), k * n\n"
          "    if dataflow == 'os':\n"
          "        return ceil_div(m, rows) * ceil_div(n, cols) * (k + rows + cols - 2), m * k * ceil_div(n, cols), k * n * ceil_div(m, rows)\n"
          "    return ceil_div(k, rows) * ceil_div(m, cols) * (2 * rows + cols + n - 2), m * k, k * n * ceil_div(m, cols)\n")

WRONG = [
    # a list, not a tuple
    _RIGHT.replace("def dataflow_costs(", "def _costs(") +
    "def dataflow_costs(*args):\n"
    "    return list(_costs(*args))\n",
    # IS cuts M by the rows, as OS does
    _RIGHT.replace("ceil_div(k, rows) * ceil_div(m, cols) * (2 * rows", "ceil_div(k, rows) * ceil_div(m, rows) * (2 * rows")
          .replace("k * n * ceil_div(m, cols)", "k * n * ceil_div(m, rows)"),
    # OS's tile takes K + rows + cols (one too many)
    _RIGHT.replace("(k + rows + cols - 2)", "(k + rows + cols - 1)"),
    # the stationary weights counted once per tile of M in WS too
    _RIGHT.replace("m * k * ceil_div(n, cols), k * n\n", "m * k * ceil_div(n, cols), k * n * ceil_div(m, rows)\n"),
    # X counted once in OS as well (it is streamed there)
    _RIGHT.replace("(k + rows + cols - 2), m * k * ceil_div(n, cols)", "(k + rows + cols - 2), m * k"),
    # floor instead of ceiling for the tiles
    _RIGHT.replace("ceil_div = lambda a, b: -(-a // b)", "ceil_div = lambda a, b: max(1, a // b)"),
    # WS and IS swapped: IS's cycles for WS and the other way round
    _RIGHT.replace("if dataflow == 'ws':", "if dataflow == 'is':")
          .replace("    return ceil_div(k, rows) * ceil_div(m, cols)", "    if dataflow != 'ws':\n        raise ValueError(dataflow)\n"
                   "    return ceil_div(k, rows) * ceil_div(m, cols)"),
    # floats: true division and math.ceil of products, rounded at the end by float()
    _RIGHT.replace("ceil_div = lambda a, b: -(-a // b)", "ceil_div = lambda a, b: float(-(-a // b))"),
    # NumPy integers
    "import numpy as np\n" + _RIGHT.replace("ceil_div = lambda a, b: -(-a // b)", "ceil_div = lambda a, b: np.int64(-(-a // b))"),
]

RIGHT = [
    _RIGHT,
    # the tiles as in dataflows' table, with math.ceil
    "def dataflow_costs(dataflow, m, k, n, rows, cols):\n"
    "    c = math.ceil\n"
    "    tiles = {'ws': c(k / rows) * c(n / cols), 'os': c(m / rows) * c(n / cols), 'is': c(k / rows) * c(m / cols)}\n"
    "    streamed = {'ws': m, 'os': k, 'is': n}[dataflow]\n"
    "    fixed = rows + cols - 2 if dataflow == 'os' else 2 * rows + cols - 2\n"
    "    reads_x = m * k if dataflow == 'is' else m * k * c(n / cols)\n"
    "    reads_w = k * n * {'ws': 1, 'os': c(m / rows), 'is': c(m / cols)}[dataflow]\n"
    "    return (tiles[dataflow] * (streamed + fixed), reads_x, reads_w)\n",
    # input-stationary as weight-stationary on the transposed product, as section 1 says
    "def dataflow_costs(dataflow, m, k, n, rows, cols):\n"
    "    if dataflow == 'is':\n"
    "        cycles, w_reads, x_reads = dataflow_costs('ws', n, k, m, rows, cols)\n"
    "        return cycles, x_reads, w_reads\n"
    "    tiles_n = (n + cols - 1) // cols\n"
    "    if dataflow == 'ws':\n"
    "        return ((k + rows - 1) // rows) * tiles_n * (2 * rows + cols + m - 2), m * k * tiles_n, k * n\n"
    "    tiles_m = (m + rows - 1) // rows\n"
    "    return tiles_m * tiles_n * (k + rows + cols - 2), m * k * tiles_n, k * n * tiles_m\n",
    # NumPy inside, ints out
    "import numpy as np\n"
    "def dataflow_costs(dataflow, m, k, n, rows, cols):\n"
    "    sizes = np.array([m, k, n], dtype=np.int64)\n"
    "    tm, tk, tn = -(-sizes // rows)\n"
    "    cm, _, cn = -(-sizes // cols)\n"
    "    if dataflow == 'ws':\n"
    "        out = tk * cn * (2 * rows + cols + m - 2), m * k * cn, k * n\n"
    "    elif dataflow == 'os':\n"
    "        out = tm * cn * (k + rows + cols - 2), m * k * cn, k * n * tm\n"
    "    else:\n"
    "        out = tk * cm * (2 * rows + cols + n - 2), m * k, k * n * cm\n"
    "    return tuple(int(v) for v in out)\n",
]
