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
    # returns an int
    _HEAD + "    p, g, o = 2 * n_params, 2 * n_params, 12 * n_params\n    s = [0, o, g + o, p + g + o][stage]\n"
    "    return round(p + g + o - s + s / world_size)",
]
RIGHT = [
    _HEAD + "    per = {0: 16.0, 1: 4 + 12 / world_size, 2: 2 + 14 / world_size, 3: 16 / world_size}[stage]\n"
    "    return per * n_params",
]
