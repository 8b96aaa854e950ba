_HEAD = "def shard_indices(n, world_size, rank, shuffle, seed, epoch):\n"
_ORDER = ("    if shuffle:\n        g = torch.Generator(); g.manual_seed(SEEDEXPR)\n"
          "        order = torch.randperm(n, generator=g).tolist()\n    else:\n        order = list(range(n))\n")
_RIGHT_ORDER = _ORDER.replace("SEEDEXPR", "seed + epoch")
WRONG = [
    # no set_epoch: the same order every epoch
    _HEAD + _ORDER.replace("SEEDEXPR", "seed") + "    total = -(-n // world_size) * world_size\n"
    "    while len(order) < total:\n        order += order[: total - len(order)]\n    return order[rank:total:world_size]",
    # contiguous blocks instead of every world_size-th index
    _HEAD + _RIGHT_ORDER + "    per = -(-n // world_size)\n    total = per * world_size\n"
    "    while len(order) < total:\n        order += order[: total - len(order)]\n    return order[rank * per:(rank + 1) * per]",
    # forgets the padding
    _HEAD + _RIGHT_ORDER + "    return order[rank::world_size]",
    # pads only once (too short when n < world_size / 2)
    _HEAD + _RIGHT_ORDER + "    total = -(-n // world_size) * world_size\n"
    "    order += order[: total - len(order)]\n    return order[rank:total:world_size]",
    # floor instead of ceiling: drops the tail (drop_last=True behaviour)
    _HEAD + _RIGHT_ORDER + "    total = (n // world_size) * world_size\n    return order[rank:total:world_size]",
    # pads with zeros
    _HEAD + _RIGHT_ORDER + "    total = -(-n // world_size) * world_size\n"
    "    order += [0] * (total - len(order))\n    return order[rank:total:world_size]",
    # shuffles with Python's random module
    _HEAD + "    import random\n    order = list(range(n))\n    if shuffle:\n        random.Random(seed + epoch).shuffle(order)\n"
    "    total = -(-n // world_size) * world_size\n    while len(order) < total:\n        order += order[: total - len(order)]\n"
    "    return order[rank:total:world_size]",
    # pads from the end of the list instead of its start
    _HEAD + _RIGHT_ORDER + "    total = -(-n // world_size) * world_size\n"
    "    while len(order) < total:\n        order += order[len(order) - (total - len(order)):]\n"
    "    return order[rank:total:world_size]",
    # a tensor of indices where a list of ints is asked
    _HEAD + _RIGHT_ORDER + "    total = -(-n // world_size) * world_size\n"
    "    while len(order) < total:\n        order += order[: total - len(order)]\n"
    "    return torch.tensor(order[rank:total:world_size])",
    # the sampler without set_epoch
    _HEAD + "    s = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=shuffle, seed=seed)\n"
    "    return list(s)",
]
RIGHT = [
    # the sampler itself (the task allows it)
    _HEAD + "    s = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=shuffle, seed=seed)\n"
    "    s.set_epoch(epoch)\n    return list(s)",
    # NumPy's resize repeats from the start; tolist gives Python ints
    "import numpy as np\n" + _HEAD + _RIGHT_ORDER
    + "    total = -(-n // world_size) * world_size\n    return np.resize(np.array(order), total)[rank::world_size].tolist()",
    # modular indexing instead of padding a list
    _HEAD + _RIGHT_ORDER + "    total = -(-n // world_size) * world_size\n"
    "    return [order[i % n] for i in range(rank, total, world_size)]",
    # itertools: cycle the order, cut it to length, then take every world_size-th
    "import itertools\n" + _HEAD + _RIGHT_ORDER + "    total = -(-n // world_size) * world_size\n"
    "    padded = list(itertools.islice(itertools.cycle(order), total))\n"
    "    return padded[rank::world_size]",
    # the permutation kept as a tensor, converted at the end
    _HEAD + "    if shuffle:\n        g = torch.Generator().manual_seed(seed + epoch)\n"
    "        order = torch.randperm(n, generator=g)\n    else:\n        order = torch.arange(n)\n"
    "    total = -(-n // world_size) * world_size\n    reps = -(-total // n)\n"
    "    return [int(i) for i in order.repeat(reps)[:total][rank::world_size]]",
]
