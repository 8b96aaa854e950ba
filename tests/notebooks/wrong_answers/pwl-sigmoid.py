WRONG = [
    # the true sigmoid, not piecewise linear
    "def pwl_sigmoid(x, knots):\n"
    "    return torch.sigmoid(x)",
    # extrapolates the end segments beyond the knots
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    i = (torch.searchsorted(knots, x, right=True) - 1).clamp(0, len(knots) - 2)\n"
    "    slope = (y[i + 1] - y[i]) / (knots[i + 1] - knots[i])\n"
    "    return y[i] + slope * (x - knots[i])",
    # 0 and 1 beyond the knots instead of the end values
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    xc = x.clamp(knots[0], knots[-1])\n"
    "    i = (torch.searchsorted(knots, xc, right=True) - 1).clamp(0, len(knots) - 2)\n"
    "    out = y[i] + (y[i + 1] - y[i]) / (knots[i + 1] - knots[i]) * (xc - knots[i])\n"
    "    return torch.where(x < knots[0], 0.0, torch.where(x > knots[-1], 1.0, out))",
    # the value at the nearest knot below (a staircase)
    "def pwl_sigmoid(x, knots):\n"
    "    i = (torch.searchsorted(knots, x.clamp(knots[0], knots[-1]), right=True) - 1).clamp(0, len(knots) - 1)\n"
    "    return torch.sigmoid(knots)[i]",
    # off by one: the next segment's line
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    xc = x.clamp(knots[0], knots[-1])\n"
    "    i = torch.searchsorted(knots, xc, right=True).clamp(0, len(knots) - 2)\n"
    "    slope = (y[i + 1] - y[i]) / (knots[i + 1] - knots[i])\n"
    "    return y[i] + slope * (xc - knots[i])",
    # float64 result
    "def pwl_sigmoid(x, knots):\n"
    "    import numpy as np\n"
    "    return torch.from_numpy(np.interp(x.numpy(), knots.numpy(), torch.sigmoid(knots).numpy()).astype('float64'))",
]

RIGHT = [
    "def pwl_sigmoid(x, knots):\n"
    "    import numpy as np\n"
    "    return torch.from_numpy(np.interp(x.numpy(), knots.numpy(), torch.sigmoid(knots).numpy()).astype('float32'))",
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    out = torch.full_like(x, float(y[0]))\n"
    "    for j in range(len(knots) - 1):\n"
    "        t = ((x - knots[j]) / (knots[j + 1] - knots[j])).clamp(0, 1)\n"
    "        out = torch.where(x >= knots[j], y[j] + t * (y[j + 1] - y[j]), out)\n"
    "    return out",
]
