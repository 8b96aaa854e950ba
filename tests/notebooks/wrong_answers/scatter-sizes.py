WRONG = [
    # torch.tensor_split's sizes (spread the remainder), not chunk's
    "def scatter_sizes(batch, n_devices):\n    base, extra = divmod(batch, n_devices)\n"
    "    return [base + (1 if i < extra else 0) for i in range(n_devices) if base + (1 if i < extra else 0) > 0]",
    # always one entry per device, zeros included
    "def scatter_sizes(batch, n_devices):\n    size = -(-batch // n_devices)\n"
    "    return [max(0, min(size, batch - i * size)) for i in range(n_devices)]",
    # floor division: the remainder all goes to the last device
    "def scatter_sizes(batch, n_devices):\n    size = batch // n_devices\n"
    "    return [size] * (n_devices - 1) + [batch - size * (n_devices - 1)]",
    # a tuple where a list is asked
    "def scatter_sizes(batch, n_devices):\n    return tuple(len(c) for c in torch.empty(batch).chunk(n_devices))",
]
RIGHT = [
    "def scatter_sizes(batch, n_devices):\n    return [len(c) for c in torch.arange(batch).chunk(n_devices)]",
    "import math\ndef scatter_sizes(batch, n_devices):\n    size = math.ceil(batch / n_devices)\n"
    "    return [min(size, batch - start) for start in range(0, batch, size)]",
]
