_HEAD = "def zero_memory(n_params, world_size, stage):\n"
WRONG = [
    # K = 8: fp32 momentum and variance without the fp32 parameter copy
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 8 * n_params\n    s = [0, o, g + o, p + g + o][stage]\n"
    "    return float(p + g + o - s) + s / world_size",
    # stage 1 already shards the gradients
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n    s = [0, g + o, g + o, p + g + o][stage]\n"
    "    return float(p + g + o - s) + s / world_size",
    # stage 2 shards the parameters too
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n    s = [0, o, p + g + o, p + g + o][stage]\n"
    "    return float(p + g + o - s) + s / world_size",
    # integer division
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n    s = [0, o, g + o, p + g + o][stage]\n"
    "    return float(p + g + o - s + s // world_size)",
    # fp32 everywhere: 4 + 4 + 8 bytes
    _HEAD + "    p, g, o = 4 * n_params, 4 * n_params, 8 * n_params\n    s = [0, o, g + o, p + g + o][stage]\n"
    "    return float(p + g + o - s) + s / world_size",
    # a NumPy scalar where a Python float is asked
    "import numpy as np\n" + _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n"
    "    s = [0, o, g + o, p + g + o][stage]\n    return np.float64(p + g + o - s) + s / world_size",
    # stage 3 forgets the gradients: only parameters and optimizer state divided
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n    s = [0, o, g + o, p + o][stage]\n"
    "    return float(p + g + o - s) + s / world_size",
    # returns an int
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n    s = [0, o, g + o, p + g + o][stage]\n"
    "    return round(p + g + o - s + s / world_size)",
]
RIGHT = [
    _HEAD + "    per = {0: 16.0, 1: 4 + 12 / world_size, 2: 2 + 14 / world_size, 3: 16 / world_size}[stage]\n"
    "    return per * n_params",
    # which states are sharded, as flags
    _HEAD + "    total = 0.0\n    for nbytes, first_sharded_stage in ((2, 3), (2, 2), (12, 1)):\n"
    "        total += nbytes * n_params / (world_size if stage >= first_sharded_stage else 1)\n    return total",
    # exact fractions, rounded once
    "from fractions import Fraction\n" + _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n"
    "    kept = [p + g + o, p + g, p, 0][stage]\n    return float(kept + Fraction(p + g + o - kept, world_size))",
    # NumPy float64 inside, converted to a Python float
    "import numpy as np\n" + _HEAD + "    b = np.array([2.0, 2.0, 12.0]) * n_params\n"
    "    shard = np.array([stage >= 3, stage >= 2, stage >= 1])\n"
    "    return float(np.where(shard, b / world_size, b).sum())",
]
