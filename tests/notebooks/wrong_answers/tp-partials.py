_HEAD = "def tp_partials(x, w1, b1, w2, world_size):\n"
WRONG = [
    # torch.chunk: fewer pieces than devices when hidden does not divide evenly
    _HEAD + "    return [torch.relu(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in torch.arange(w1.shape[0]).chunk(world_size)]",
    # ReLU left for after the all-reduce (it does not distribute over the sum)
    _HEAD + "    return [(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in torch.tensor_split(torch.arange(w1.shape[0]), world_size)]",
    # forgets the first bias
    _HEAD + "    return [torch.relu(x @ w1[i].T) @ w2[:, i].T for i in torch.tensor_split(torch.arange(w1.shape[0]), world_size)]",
    # every device computes the whole block and divides by the number of devices
    _HEAD + "    h = torch.relu(x @ w1.T + b1)\n    return [h @ w2.T / world_size for _ in range(world_size)]",
    # returns the all-reduced output instead of the partials
    _HEAD + "    return torch.relu(x @ w1.T + b1) @ w2.T",
    # pairs each device's hidden units with fc2's first columns instead of the matching ones
    _HEAD + "    out = []\n    for i in torch.tensor_split(torch.arange(w1.shape[0]), world_size):\n"
    "        out.append(torch.relu(x @ w1[i].T + b1[i]) @ w2[:, :len(i)].T)\n    return out",
    # a tuple where a list is asked
    _HEAD + "    return tuple(torch.relu(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in torch.tensor_split(torch.arange(w1.shape[0]), world_size))",
]
RIGHT = [
    _HEAD + "    out = []\n    for w1s, b1s, w2s in zip(w1.tensor_split(world_size, 0), b1.tensor_split(world_size), w2.tensor_split(world_size, 1)):\n"
    "        out.append(torch.nn.functional.linear(torch.relu(torch.nn.functional.linear(x, w1s, b1s)), w2s))\n    return out",
]
