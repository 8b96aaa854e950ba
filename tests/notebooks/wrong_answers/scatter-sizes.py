_HEAD = "def scatter_sizes(batch, n_devices):\n"
WRONG = [
    # torch.tensor_split's sizes (spread the remainder), not chunk's
    _HEAD + "    base, extra = divmod(batch, n_devices)\n"
    "    return [base + (1 if i < extra else 0) for i in range(n_devices) if base + (1 if i < extra else 0) > 0]",
    # always one entry per device, zeros included
    _HEAD + "    size = -(-batch // n_devices)\n"
    "    return [max(0, min(size, batch - i * size)) for i in range(n_devices)]",
    # floor division: the remainder all goes to the last device
    _HEAD + "    size = batch // n_devices\n"
    "    return [size] * (n_devices - 1) + [batch - size * (n_devices - 1)]",
    # a tuple where a list is asked
    _HEAD + "    return tuple(len(c) for c in torch.empty(batch).chunk(n_devices))",
    # NumPy's array_split: tensor_split's sizes, as NumPy ints
    "import numpy as np\n" + _HEAD + "    return [len(c) for c in np.array_split(np.arange(batch), n_devices)]",
    # a tensor of sizes
    _HEAD + "    return torch.tensor([len(c) for c in torch.empty(batch).chunk(n_devices)])",
]
RIGHT = [
    _HEAD + "    return [len(c) for c in torch.arange(batch).chunk(n_devices)]",
    "import math\n" + _HEAD + "    size = math.ceil(batch / n_devices)\n"
    "    return [min(size, batch - start) for start in range(0, batch, size)]",
    # NumPy-built, converted to Python ints
    "import numpy as np\n" + _HEAD + "    size = -(-batch // n_devices)\n"
    "    starts = np.arange(0, batch, size)\n    return [int(v) for v in np.minimum(size, batch - starts)]",
    # a while loop, as the solution, but counting down from the batch
    _HEAD + "    size, sizes = -(-batch // n_devices), []\n    while sum(sizes) < batch:\n"
    "        sizes.append(min(size, batch - sum(sizes)))\n    return sizes",
    # chunk of a 2-D tensor along its first dimension
    _HEAD + "    return [c.shape[0] for c in torch.zeros(batch, 3).chunk(n_devices, dim=0)]",
]
