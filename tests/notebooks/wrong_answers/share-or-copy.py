WRONG = [
    # both copy
    "def share_and_copy(a):\n    return torch.tensor(a), torch.tensor(a)",
    # both share
    "def share_and_copy(a):\n    return torch.from_numpy(a), torch.as_tensor(a)",
    # the legacy constructor converts to float32, so it copies and changes the dtype
    "def share_and_copy(a):\n    return torch.Tensor(a), torch.tensor(a)",
    # swapped
    "def share_and_copy(a):\n    return torch.tensor(a), torch.from_numpy(a)",
    # a list, not a tuple
    "def share_and_copy(a):\n    return [torch.from_numpy(a), torch.tensor(a)]",
    # shares but changes the dtype
    "def share_and_copy(a):\n    return torch.from_numpy(a).float(), torch.tensor(a)",
    # writes into a: the caller's array changes
    "def share_and_copy(a):\n"
    "    copied = torch.tensor(a)\n"
    "    a *= 1\n"
    "    a[...] = 0\n"
    "    return torch.from_numpy(a), copied",
]
RIGHT = [
    "def share_and_copy(a):\n    return torch.as_tensor(a), torch.from_numpy(a).clone()",
    "def share_and_copy(a):\n    shared = torch.from_numpy(a)\n    return shared, shared.clone()",
    # torch.asarray shares by default and copies when asked
    "def share_and_copy(a):\n"
    "    return torch.asarray(a), torch.asarray(a, copy=True)",
    # a copy made on the NumPy side, then shared
    "def share_and_copy(a):\n"
    "    return torch.from_numpy(a), torch.from_numpy(a.copy())",
]

# What the task makes wrong among the generated variants of the solution.
FAILING_VARIANTS = {
    "restrided": "shared must use a's own memory: a result with other strides is new memory",
    "copied": "shared must use a's memory, not a copy",
    "noisy": "shared must use a's memory, and both must hold exactly a's values",
    "inputs-copied": "shared must use the memory of the array the caller passed, not of a copy",
    "inputs-changed": "the task says a itself must not change",
}
