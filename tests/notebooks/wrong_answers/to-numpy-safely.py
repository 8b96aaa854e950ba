WRONG = [
    # refuses tensors that require grad
    "def to_numpy_safely(t):\n    return t.numpy()",
    # a copy
    "def to_numpy_safely(t):\n    return t.detach().clone().numpy()",
    # np.array copies by default
    "def to_numpy_safely(t):\n    return np.array(t.detach())",
    # contiguous() copies a transposed or sliced tensor
    "def to_numpy_safely(t):\n    return t.detach().contiguous().numpy()",
    # through Python lists: a copy, and float32 becomes float64
    "def to_numpy_safely(t):\n    return np.array(t.tolist())",
    # switches off the caller's requires_grad (and fails on a non-leaf)
    "def to_numpy_safely(t):\n    t.requires_grad_(False)\n    return t.numpy()",
    # a copy made on the NumPy side
    "def to_numpy_safely(t):\n    return t.detach().numpy().copy()",
    # changes the dtype
    "def to_numpy_safely(t):\n    return t.detach().double().numpy()",
]
RIGHT = [
    "def to_numpy_safely(t):\n    return t.numpy(force=True)",
    "def to_numpy_safely(t):\n    return np.asarray(t.detach().cpu())",
    "def to_numpy_safely(t):\n    return t.cpu().detach().numpy()",
]
