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
    "import numpy as np\n"
    "def pwl_sigmoid(x, knots):\n"
    "    return torch.from_numpy(np.interp(x.numpy(), knots.numpy(), torch.sigmoid(knots).numpy()).astype('float64'))",
    # assumes evenly spaced knots (one slope step from the first gap)
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    gap = knots[1] - knots[0]\n"
    "    xc = x.clamp(knots[0], knots[-1])\n"
    "    i = ((xc - knots[0]) / gap).floor().long().clamp(0, len(knots) - 2)\n"
    "    return y[i] + (y[i + 1] - y[i]) / gap * (xc - knots[i])",
    # interpolates x itself, then takes the sigmoid
    "def pwl_sigmoid(x, knots):\n"
    "    return torch.sigmoid(x.clamp(knots[0], knots[-1]))",
]

RIGHT = [
    "import numpy as np\n"
    "def pwl_sigmoid(x, knots):\n"
    "    return torch.from_numpy(np.interp(x.numpy(), knots.numpy(), torch.sigmoid(knots).numpy()).astype('float32'))",
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    out = torch.full_like(x, float(y[0]))\n"
    "    for j in range(len(knots) - 1):\n"
    "        t = ((x - knots[j]) / (knots[j + 1] - knots[j])).clamp(0, 1)\n"
    "        out = torch.where(x >= knots[j], y[j] + t * (y[j + 1] - y[j]), out)\n"
    "    return out",
    # float64 inside, with a (slope, intercept) table as NFU-3 keeps it
    "def pwl_sigmoid(x, knots):\n"
    "    k = knots.double()\n"
    "    y = torch.sigmoid(k)\n"
    "    slope = (y[1:] - y[:-1]) / (k[1:] - k[:-1])\n"
    "    intercept = y[:-1] - slope * k[:-1]\n"
    "    xc = x.double().clamp(float(k[0]), float(k[-1]))\n"
    "    seg = (torch.bucketize(xc, k, right=True) - 1).clamp(0, len(k) - 2)\n"
    "    return (slope[seg] * xc + intercept[seg]).float()",
    # in place on x, which the task allows
    "def pwl_sigmoid(x, knots):\n"
    "    y = torch.sigmoid(knots)\n"
    "    x.clamp_(float(knots[0]), float(knots[-1]))\n"
    "    i = (torch.searchsorted(knots, x, right=True) - 1).clamp(0, len(knots) - 2)\n"
    "    w = (x - knots[i]) / (knots[i + 1] - knots[i])\n"
    "    return torch.lerp(y[i], y[i + 1], w)",
]
