_HEAD = "def allreduce_bytes(nbytes, world_size):\n"
WRONG = [
    # counts only the reduce-scatter half of the ring
    _HEAD + "    return (world_size - 1) * nbytes / world_size, float((world_size - 1) * nbytes)",
    # forgets that the chunks are 1/N of the data
    _HEAD + "    return float(2 * (world_size - 1) * nbytes), float((world_size - 1) * nbytes)",
    # counts rank 0's sends and receives together for the naive scheme
    _HEAD + "    return 2 * (world_size - 1) * nbytes / world_size, float(2 * (world_size - 1) * nbytes)",
    # N instead of N - 1 in the naive scheme
    _HEAD + "    return 2 * (world_size - 1) * nbytes / world_size, float(world_size * nbytes)",
    # integer division: ints, and wrong when N does not divide the bytes
    _HEAD + "    return 2 * (world_size - 1) * nbytes // world_size, (world_size - 1) * nbytes",
    # a tensor pair where Python floats are asked
    _HEAD + "    return (torch.tensor(2 * (world_size - 1) * nbytes / world_size),\n"
    "            torch.tensor(float((world_size - 1) * nbytes)))",
    # a list where a tuple is asked
    _HEAD + "    return [2 * (world_size - 1) * nbytes / world_size, float((world_size - 1) * nbytes)]",
]
RIGHT = [
    _HEAD + "    return 2.0 * nbytes * (world_size - 1) / world_size, nbytes * (world_size - 1.0)",
    # chunk size first, then 2(N-1) chunks
    _HEAD + "    chunk = nbytes / world_size\n    return 2 * (world_size - 1) * chunk, float(nbytes * (world_size - 1))",
    # NumPy float64 inside, converted to Python floats
    "import numpy as np\n" + _HEAD + "    n = np.float64(world_size)\n"
    "    return float(2 * nbytes * (1 - 1 / n)), float(nbytes * (n - 1))",
    # exact fractions, rounded once
    "from fractions import Fraction\n" + _HEAD
    + "    return float(Fraction(2 * (world_size - 1) * nbytes, world_size)), float((world_size - 1) * nbytes)",
]
