WRONG = [
    # one position too many
    "def sequence_mask(lengths, max_len):\n    return torch.arange(max_len) <= lengths[:, None]",
    # max_len ignored: only as wide as the longest sequence
    "def sequence_mask(lengths, max_len):\n    return torch.arange(int(lengths.max())) < lengths[:, None]",
    # lengths as a row: broadcasts the wrong way round
    "def sequence_mask(lengths, max_len):\n    return torch.arange(max_len)[:, None] < lengths",
    # numbers instead of booleans
    "def sequence_mask(lengths, max_len):\n    return (torch.arange(max_len) < lengths[:, None]).long()",
    # True at the padding instead of the real positions
    "def sequence_mask(lengths, max_len):\n    return torch.arange(max_len) >= lengths[:, None]",
]
RIGHT = [
    "def sequence_mask(lengths, max_len):\n    return lengths.unsqueeze(1) > torch.arange(max_len).unsqueeze(0)",
    "def sequence_mask(lengths, max_len):\n"
    "    return torch.arange(max_len).expand(len(lengths), max_len) < lengths.unsqueeze(-1)",
    # the transposed comparison, transposed back
    "def sequence_mask(lengths, max_len):\n"
    "    return (torch.arange(max_len)[:, None] < lengths).T",
    # NumPy-built
    "import numpy as np\n"
    "def sequence_mask(lengths, max_len):\n"
    "    return torch.from_numpy(np.arange(max_len) < lengths.numpy()[:, None])",
    # the specification's loop
    "def sequence_mask(lengths, max_len):\n"
    "    out = torch.zeros(len(lengths), max_len, dtype=torch.bool)\n"
    "    for i in range(len(lengths)):\n"
    "        out[i, : int(lengths[i])] = True\n"
    "    return out",
]
