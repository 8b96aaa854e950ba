_HEAD = "def tp_partials(x, w1, b1, w2, world_size):\n"
_SPLIT = "torch.tensor_split(torch.arange(w1.shape[0]), world_size)"
WRONG = [
    # torch.chunk: fewer pieces than devices when hidden does not divide evenly
    _HEAD + "    return [torch.relu(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in torch.arange(w1.shape[0]).chunk(world_size)]",
    # ReLU left for after the all-reduce (it does not distribute over the sum)
    _HEAD + f"    return [(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in {_SPLIT}]",
    # forgets the first bias
    _HEAD + f"    return [torch.relu(x @ w1[i].T) @ w2[:, i].T for i in {_SPLIT}]",
    # every device computes the whole block and divides by the number of devices
    _HEAD + "    h = torch.relu(x @ w1.T + b1)\n    return [h @ w2.T / world_size for _ in range(world_size)]",
    # returns the all-reduced output instead of the partials
    _HEAD + "    return torch.relu(x @ w1.T + b1) @ w2.T",
    # pairs each device's hidden units with fc2's first columns instead of the matching ones
    _HEAD + f"    out = []\n    for i in {_SPLIT}:\n"
    "        out.append(torch.relu(x @ w1[i].T + b1[i]) @ w2[:, :len(i)].T)\n    return out",
    # a tuple where a list is asked
    _HEAD + f"    return tuple(torch.relu(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in {_SPLIT})",
    # float32 partials from float64 inputs
    _HEAD + f"    return [(torch.relu(x @ w1[i].T + b1[i]) @ w2[:, i].T).float() for i in {_SPLIT}]",
    # a device that owns no hidden units is left out
    _HEAD + f"    return [torch.relu(x @ w1[i].T + b1[i]) @ w2[:, i].T for i in {_SPLIT} if len(i)]",
]
RIGHT = [
    _HEAD + "    out = []\n    for w1s, b1s, w2s in zip(w1.tensor_split(world_size, 0), b1.tensor_split(world_size), "
    "w2.tensor_split(world_size, 1)):\n"
    "        out.append(torch.nn.functional.linear(torch.relu(torch.nn.functional.linear(x, w1s, b1s)), w2s))\n"
    "    return out",
    # the transpose of a product: every partial comes back non-contiguous
    _HEAD + f"    return [(w2[:, i] @ torch.relu(w1[i] @ x.T + b1[i, None])).T for i in {_SPLIT}]",
    # einsum, with the ReLU applied in place on a fresh tensor
    _HEAD + f"    out = []\n    for i in {_SPLIT}:\n"
    "        h = torch.einsum('bi,hi->bh', x, w1[i]) + b1[i]\n        h.relu_()\n"
    "        out.append(torch.einsum('bh,oh->bo', h, w2[:, i]))\n    return out",
    # NumPy-built, back as float64 tensors
    "import numpy as np\n" + _HEAD + "    xn, w1n, b1n, w2n = (t.numpy() for t in (x, w1, b1, w2))\n"
    "    out = []\n    for i in np.array_split(np.arange(w1n.shape[0]), world_size):\n"
    "        out.append(torch.from_numpy(np.maximum(xn @ w1n[i].T + b1n[i], 0) @ w2n[:, i].T))\n    return out",
    # one matmul for the hidden layer, then per-device column slices (views) of it
    _HEAD + "    h = torch.relu(x @ w1.T + b1)\n"
    f"    return [h[:, i] @ w2[:, i].T for i in {_SPLIT}]",
    # changes its inputs (allowed: the checks pass copies) by applying the ReLU into a reused buffer
    _HEAD + "    h = torch.addmm(b1, x, w1.T)\n    torch.relu_(h)\n    x.zero_()\n"
    f"    return [h[:, i] @ w2[:, i].T for i in {_SPLIT}]",
]
