WRONG = [
    # forgets the storage offset
    "def flat_offset(index, strides, offset):\n"
    "    return sum(i * s for i, s in zip(index, strides))",
    # pairs indices with the strides in reverse order
    "def flat_offset(index, strides, offset):\n"
    "    return offset + sum(i * s for i, s in zip(index, reversed(strides)))",
    # off by one: each index paired with the next dimension's stride
    "def flat_offset(index, strides, offset):\n"
    "    return offset + sum(i * s for i, s in zip(index, tuple(strides[1:]) + (1,)))",
    # off by one: counts positions from 1
    "def flat_offset(index, strides, offset):\n"
    "    return offset + sum((i + 1) * s for i, s in zip(index, strides)) - 1",
    # a float: the task asks for an int
    "def flat_offset(index, strides, offset):\n"
    "    return float(offset + sum(i * s for i, s in zip(index, strides)))",
    # a NumPy integer is not a Python int
    "import numpy as np\n"
    "def flat_offset(index, strides, offset):\n"
    "    return np.int64(offset) + sum(i * s for i, s in zip(index, strides))",
    # returns a tensor instead of an int
    "def flat_offset(index, strides, offset):\n"
    "    return torch.tensor(offset + sum(i * s for i, s in zip(index, strides)))",
]

RIGHT = [
    "def flat_offset(index, strides, offset):\n"
    "    pos = offset\n"
    "    for i, s in zip(index, strides):\n"
    "        pos += i * s\n"
    "    return pos",
    "def flat_offset(index, strides, offset):\n"
    "    return int(offset + sum(torch.tensor(index, dtype=torch.int64) * torch.tensor(strides, dtype=torch.int64)))",
    # NumPy's dot product, converted to a Python int
    "import numpy as np\n"
    "def flat_offset(index, strides, offset):\n"
    "    return offset + int(np.dot(np.array(index, dtype=np.int64), np.array(strides, dtype=np.int64))) if index else offset",
    # sum with the offset as its start
    "def flat_offset(index, strides, offset):\n"
    "    return int(sum(map(lambda p: p[0] * p[1], zip(index, strides)), offset))",
]
