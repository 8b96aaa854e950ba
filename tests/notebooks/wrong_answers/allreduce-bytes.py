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
    # a list where a tuple is asked
    _HEAD + "    return [2 * (world_size - 1) * nbytes / world_size, float((world_size - 1) * nbytes)]",
]
RIGHT = [
    _HEAD + "    return 2.0 * nbytes * (world_size - 1) / world_size, nbytes * (world_size - 1.0)",
]
